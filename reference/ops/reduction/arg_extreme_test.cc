// Tests of ArgMax and ArgMin: keepdims, select_last_index, exact integers.
#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::Floats;
using testing::Int64Tensor;
using testing::RunOutput;

TEST(ArgExtremeTest, ArgMaxFirstAndLastIndex) {
  const Tensor x = Floats({2, 3}, {1, 3, 3, 2, 2, 1});
  Tensor first = RunOutput(NodeRunner("ArgMax").Opset(13).Input(x).Attr("axis", int64_t{1}));
  Tensor last = RunOutput(
      NodeRunner("ArgMax").Opset(13).Input(x).Attr("axis", int64_t{1}).Attr("select_last_index", int64_t{1}));
  EXPECT_EQ(first.shape(), (Shape{2, 1}));
  EXPECT_EQ(first.ToInt64s(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(last.ToInt64s(), (std::vector<int64_t>{2, 1}));
}

TEST(ArgExtremeTest, ArgMinNoKeepdimsNegativeAxis) {
  Tensor y = RunOutput(NodeRunner("ArgMin")
                           .Opset(13)
                           .Input(Floats({2, 2}, {4, 1, 0, 5}))
                           .Attr("axis", int64_t{-2})
                           .Attr("keepdims", int64_t{0}));
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(y.ToInt64s(), (std::vector<int64_t>{1, 0}));
}

TEST(ArgExtremeTest, Int64ComparesExactly) {
  const int64_t big = int64_t{1} << 60;
  Tensor y = RunOutput(NodeRunner("ArgMax").Opset(13).Input(Int64Tensor({2}, {big, big + 1})));
  EXPECT_EQ(y.GetInt64(0), 1);
}

TEST(ArgExtremeTest, EmptyAxisIsAnError) {
  EXPECT_FALSE(NodeRunner("ArgMax").Opset(13).Input(Floats({0}, {})).Run().ok());
}

}  // namespace
}  // namespace parity::ops
