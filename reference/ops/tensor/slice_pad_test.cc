// Tests of Slice, Pad and CenterCropPad.
#include <limits>

#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

TEST(SliceTest, NegativeStepsAndClamping) {
  const Tensor x = Floats({5}, Iota(5));
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t small = std::numeric_limits<int64_t>::min();
  ExpectDoubles(RunOk(NodeRunner("Slice").Input(x).Input(Int64s({-1})).Input(Int64s({small})).Input(Int64s({0}))
                          .Input(Int64s({-2}))),
                {3}, {4, 2, 0});
  ExpectDoubles(RunOk(NodeRunner("Slice").Input(x).Input(Int64s({1})).Input(Int64s({big}))), {4}, {1, 2, 3, 4});
  ExpectDoubles(RunOk(NodeRunner("Slice").Input(x).Input(Int64s({10})).Input(Int64s({20}))), {0}, {});
  // A huge step takes only the first element (and must not overflow).
  ExpectDoubles(RunOk(NodeRunner("Slice").Input(x).Input(Int64s({1})).Input(Int64s({big})).Input(Int64s({0}))
                          .Input(Int64s({big}))),
                {1}, {1});
  ExpectError(NodeRunner("Slice").Input(x).Input(Int64s({0})).Input(Int64s({3})).Input(Int64s({0})).Input(Int64s({0})),
              "zero");
}

TEST(SliceTest, AxesSelectDimensions) {
  const Tensor x = Floats({2, 3}, Iota(6));
  ExpectDoubles(RunOk(NodeRunner("Slice").Input(x).Input(Int64s({1})).Input(Int64s({3})).Input(Int64s({-1}))), {2, 2},
                {1, 2, 4, 5});
  ExpectError(NodeRunner("Slice").Input(x).Input(Int64s({0, 0})).Input(Int64s({1, 1})).Input(Int64s({1, -1})),
              "repeated");
}

TEST(SliceTest, OpsetOneUsesAttributes) {
  const Tensor x = Floats({2, 3}, Iota(6));
  Tensor y = RunOk(NodeRunner("Slice").Opset(1).Input(x).Attr("starts", std::vector<int64_t>{0, 1})
                       .Attr("ends", std::vector<int64_t>{1, 1000}));
  ExpectDoubles(y, {1, 2}, {1, 2});
}

TEST(PadTest, ModesOnOneAxis) {
  const Tensor x = Floats({3}, {1, 2, 3});
  auto pad = [&](const char* mode) {
    return RunOk(NodeRunner("Pad").Opset(19).Input(x).Input(Int64s({2, 3})).Attr("mode", std::string(mode)));
  };
  ExpectDoubles(pad("constant"), {8}, {0, 0, 1, 2, 3, 0, 0, 0});
  ExpectDoubles(pad("edge"), {8}, {1, 1, 1, 2, 3, 3, 3, 3});
  ExpectDoubles(pad("reflect"), {8}, {3, 2, 1, 2, 3, 2, 1, 2});
  ExpectDoubles(pad("wrap"), {8}, {2, 3, 1, 2, 3, 1, 2, 3});
}

TEST(PadTest, ConstantValueNegativePadsAndAxes) {
  const Tensor x = Floats({2, 3}, Iota(6));
  Tensor y = RunOk(NodeRunner("Pad").Opset(18).Input(x).Input(Int64s({1, -1})).Input(Floats({}, {9}))
                       .Input(Int64s({-1})));
  ExpectDoubles(y, {2, 3}, {9, 0, 1, 9, 3, 4});
  ExpectError(NodeRunner("Pad").Opset(18).Input(x).Input(Int64s({1, 1, 1})), "pads has 3 values");
  ExpectError(NodeRunner("Pad").Opset(18).Input(x).Input(Int64s({0, 0, 0, 0})).Attr("mode", std::string("wrap")),
              "not supported at opset 18");
}

TEST(PadTest, ExtremePadsAreRefusedWithoutOverflow) {
  ExpectError(NodeRunner("Pad").Input(Floats({2}, {1, 2})).Input(Int64s({std::numeric_limits<int64_t>::min(), 0})),
              "too large");
}

TEST(PadTest, OpsetTwoAttributes) {
  Tensor y = RunOk(NodeRunner("Pad").Opset(2).Input(Floats({2}, {1, 2})).Attr("pads", std::vector<int64_t>{1, 0})
                       .Attr("value", 5.0f));
  ExpectDoubles(y, {3}, {5, 1, 2});
}

TEST(PadTest, StringsPadWithEmptyStrings) {
  Tensor y = RunOk(NodeRunner("Pad").Input(Strings({1}, {"a"})).Input(Int64s({1, 0})));
  ASSERT_EQ(y.strings().size(), 2u);
  EXPECT_EQ(y.strings()[0], "");
  EXPECT_EQ(y.strings()[1], "a");
}

TEST(CenterCropPadTest, CropsAndPadsAroundTheCentre) {
  const Tensor x = Floats({5}, Iota(5));
  ExpectDoubles(RunOk(NodeRunner("CenterCropPad").Opset(18).Input(x).Input(Int64s({2}))), {2}, {1, 2});
  ExpectDoubles(RunOk(NodeRunner("CenterCropPad").Opset(18).Input(Floats({2}, {7, 8})).Input(Int64s({5}))), {5},
                {0, 7, 8, 0, 0});
  ExpectError(NodeRunner("CenterCropPad").Opset(18).Input(x).Input(Int64s({2, 2})), "shape has 2 values");
}

}  // namespace
}  // namespace parity::ops::tensor
