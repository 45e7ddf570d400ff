// Tests of Concat, Split and Tile.
#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

TEST(ConcatTest, JoinsAlongNegativeAxisIncludingEmptyInputs) {
  Tensor y = RunOk(NodeRunner("Concat")
                       .Input(Floats({2, 1}, {1, 2}))
                       .Input(Floats({2, 0}, {}))
                       .Input(Floats({2, 2}, {3, 4, 5, 6}))
                       .Attr("axis", int64_t{-1}));
  ExpectDoubles(y, {2, 3}, {1, 3, 4, 2, 5, 6});
}

TEST(ConcatTest, RefusesMismatchedShapesAndMissingAxis) {
  ExpectError(NodeRunner("Concat").Input(Floats({2, 1}, {1, 2})).Input(Floats({3, 1}, {1, 2, 3})).Attr("axis", int64_t{1}),
              "differs");
  ExpectError(NodeRunner("Concat").Input(Floats({1}, {1})), "lacks attribute 'axis'");
}

TEST(SplitTest, EqualPartsFromOutputCount) {
  auto out = NodeRunner("Split").Input(Floats({6}, {1, 2, 3, 4, 5, 6})).Outputs(3).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 3u);
  ExpectDoubles((*out)[2].tensor(), {2}, {5, 6});
}

TEST(SplitTest, LengthsFromInputAndAttribute) {
  auto out = NodeRunner("Split").Opset(13).Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6})).Input(Int64s({1, 2}))
                 .Attr("axis", int64_t{1}).Outputs(2).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectDoubles((*out)[0].tensor(), {2, 1}, {1, 4});
  ExpectDoubles((*out)[1].tensor(), {2, 2}, {2, 3, 5, 6});
  out = NodeRunner("Split").Opset(11).Input(Floats({3}, {1, 2, 3})).Attr("split", std::vector<int64_t>{0, 3})
            .Outputs(2).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), Shape{0});
  ExpectError(NodeRunner("Split").Opset(13).Input(Floats({3}, {1, 2, 3})).Input(Int64s({1, 1})).Outputs(2), "sum");
}

TEST(SplitTest, NumOutputsMakesLastChunkSmaller) {
  auto out = NodeRunner("Split").Opset(18).Input(Floats({7}, {1, 2, 3, 4, 5, 6, 7})).Attr("num_outputs", int64_t{3})
                 .Outputs(3).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectDoubles((*out)[0].tensor(), {3}, {1, 2, 3});
  ExpectDoubles((*out)[2].tensor(), {1}, {7});
  ExpectError(NodeRunner("Split").Opset(18).Input(Floats({5}, {1, 2, 3, 4, 5})).Attr("num_outputs", int64_t{4})
                  .Outputs(4),
              "cannot split");
}

TEST(TileTest, RepeatsEachAxis) {
  Tensor y = RunOk(NodeRunner("Tile").Input(Floats({2, 1}, {1, 2})).Input(Int64s({2, 3})));
  ExpectDoubles(y, {4, 3}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  EXPECT_EQ(RunOk(NodeRunner("Tile").Input(Floats({2}, {1, 2})).Input(Int64s({0}))).shape(), Shape{0});
  ExpectError(NodeRunner("Tile").Input(Floats({2}, {1, 2})).Input(Int64s({1, 1})), "repeats");
}

TEST(TileTest, OpsetOneRepeatsOneAxis) {
  Tensor y = RunOk(NodeRunner("Tile").Opset(1).Input(Floats({1, 2}, {1, 2})).Input(Ints({}, {2})).Input(Ints({}, {1})));
  ExpectDoubles(y, {1, 4}, {1, 2, 1, 2});
}

}  // namespace
}  // namespace parity::ops::tensor
