// Tests of TopK and Unique.
#include <cmath>
#include <limits>

#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

TEST(TopKTest, LargestAndSmallestWithTiesByLowerIndex) {
  const Tensor x = Floats({1, 5}, {3, 1, 3, 2, 1});
  auto out = NodeRunner("TopK").Input(x).Input(Int64s({3})).Outputs(2).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectDoubles((*out)[0].tensor(), {1, 3}, {3, 3, 2});
  ExpectInts((*out)[1].tensor(), {1, 3}, {0, 2, 3});
  out = NodeRunner("TopK").Input(x).Input(Int64s({2})).Attr("largest", int64_t{0}).Outputs(2).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectInts((*out)[1].tensor(), {1, 2}, {1, 4});
}

TEST(TopKTest, AxisAndExactUint64) {
  StatusOr<Tensor> x = Tensor::Create(DataType::kUint64, {2, 2});
  x->SetUint64(0, std::numeric_limits<uint64_t>::max());
  x->SetUint64(1, 1);
  x->SetUint64(2, std::numeric_limits<uint64_t>::max() - 1);
  x->SetUint64(3, 2);
  auto out = NodeRunner("TopK").Input(*x).Input(Int64s({1})).Attr("axis", int64_t{0}).Outputs(2).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().GetUint64(0), std::numeric_limits<uint64_t>::max());
  ExpectInts((*out)[1].tensor(), {1, 2}, {0, 1});
  ExpectError(NodeRunner("TopK").Input(*x).Input(Int64s({3})).Outputs(2), "outside");
}

TEST(TopKTest, NanRanksAboveNumbers) {
  auto out = NodeRunner("TopK").Input(Floats({3}, {1, std::nan(""), 2})).Input(Int64s({1})).Outputs(2).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectInts((*out)[1].tensor(), {1}, {1});
}

TEST(UniqueTest, SortedAndUnsortedOutputs) {
  const Tensor x = Floats({6}, {2, 1, 1, 3, 4, 3});
  auto out = NodeRunner("Unique").Input(x).Attr("sorted", int64_t{0}).Outputs(4).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectDoubles((*out)[0].tensor(), {4}, {2, 1, 3, 4});
  ExpectInts((*out)[1].tensor(), {4}, {0, 1, 3, 4});
  ExpectInts((*out)[2].tensor(), {6}, {0, 1, 1, 2, 3, 2});
  ExpectInts((*out)[3].tensor(), {4}, {1, 2, 2, 1});
  out = NodeRunner("Unique").Input(x).Outputs(4).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectDoubles((*out)[0].tensor(), {4}, {1, 2, 3, 4});
  ExpectInts((*out)[1].tensor(), {4}, {1, 0, 3, 4});
  ExpectInts((*out)[2].tensor(), {6}, {1, 0, 0, 2, 3, 2});
}

TEST(UniqueTest, SubtensorsAlongAxis) {
  const Tensor x = Floats({3, 2}, {2, 1, 0, 5, 2, 1});
  auto out = NodeRunner("Unique").Input(x).Attr("axis", int64_t{0}).Outputs(4).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectDoubles((*out)[0].tensor(), {2, 2}, {0, 5, 2, 1});
  ExpectInts((*out)[2].tensor(), {3}, {1, 0, 1});
  ExpectInts((*out)[3].tensor(), {2}, {1, 2});
}

TEST(UniqueTest, Strings) {
  Tensor y = RunOk(NodeRunner("Unique").Input(Strings({3}, {"b", "a", "b"})));
  ASSERT_EQ(y.strings().size(), 2u);
  EXPECT_EQ(y.strings()[0], "a");
}

}  // namespace
}  // namespace parity::ops::tensor
