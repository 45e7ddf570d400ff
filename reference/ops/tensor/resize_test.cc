// Tests of Resize and Upsample: coordinate modes, nearest rounding, linear
// and cubic weights, exclude_outside, antialias, extrapolation and sizes.
#include <cmath>
#include <limits>

#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

// Resize of a 1-D input by `scale` with the given attributes (opset 19).
NodeRunner Resize1D(const std::vector<double>& x, float scale) {
  NodeRunner r("Resize");
  r.Opset(19).Input(Floats({static_cast<int64_t>(x.size())}, x)).AbsentInput().Input(Floats({1}, {scale}));
  return r;
}

TEST(ResizeTest, NearestRoundingModes) {
  const std::vector<double> x = {10, 20, 30, 40};
  // half_pixel, scale 0.5: x_original = 0.5, 2.5 (exact ties).
  auto halves = [&](const char* mode) {
    return RunOk(Resize1D(x, 0.5f).Attr("nearest_mode", std::string(mode)));
  };
  ExpectDoubles(halves("round_prefer_floor"), {2}, {10, 30});
  ExpectDoubles(halves("round_prefer_ceil"), {2}, {20, 40});
  ExpectDoubles(halves("floor"), {2}, {10, 30});
  ExpectDoubles(halves("ceil"), {2}, {20, 40});
  // asymmetric, scale 0.625: x_original = 0, 1.6.
  auto fractions = [&](const char* mode) {
    return RunOk(Resize1D(x, 0.625f).Attr("coordinate_transformation_mode", std::string("asymmetric"))
                     .Attr("nearest_mode", std::string(mode)));
  };
  ExpectDoubles(fractions("round_prefer_floor"), {2}, {10, 30});
  ExpectDoubles(fractions("floor"), {2}, {10, 20});
  ExpectDoubles(fractions("ceil"), {2}, {10, 30});
}

TEST(ResizeTest, LinearHalfPixelAndAlignCorners) {
  const std::vector<double> x = {0, 10};
  ExpectDoubles(RunOk(Resize1D(x, 2).Attr("mode", std::string("linear"))), {4}, {0, 2.5, 7.5, 10});
  ExpectDoubles(RunOk(Resize1D(x, 2).Attr("mode", std::string("linear"))
                          .Attr("coordinate_transformation_mode", std::string("align_corners"))),
                {4}, {0, 10.0 / 3, 20.0 / 3, 10}, 1e-5);
}

TEST(ResizeTest, CubicWeightsAndExcludeOutside) {
  const std::vector<double> x = {0, 0, 1, 0, 0};
  // asymmetric scale 2: output 5 samples the midpoint 2.5 -> weights at
  // distances 1.5, 0.5, 0.5, 1.5 with a = -0.75.
  Tensor y = RunOk(Resize1D(x, 2).Attr("mode", std::string("cubic"))
                       .Attr("coordinate_transformation_mode", std::string("asymmetric")));
  const double a = -0.75;
  const double w_half = ((a + 2) * 0.5 - (a + 3)) * 0.25 + 1;
  EXPECT_NEAR(y.GetDouble(5), w_half, 1e-7);
  EXPECT_NEAR(y.GetDouble(4), 1.0, 1e-7);
  // At the left edge, exclude_outside renormalises the in-range taps.
  const std::vector<double> ramp = {1, 2, 3, 4};
  Tensor e = RunOk(Resize1D(ramp, 2).Attr("mode", std::string("cubic")).Attr("exclude_outside", int64_t{1}));
  Tensor c = RunOk(Resize1D(ramp, 2).Attr("mode", std::string("cubic")));
  EXPECT_NE(e.GetDouble(0), c.GetDouble(0));
}

TEST(ResizeTest, ExactSamplesIgnoreInfiniteNeighbours) {
  // asymmetric, scale 2: output 4 samples input 2 exactly; its infinite
  // neighbour has weight 0 and must not turn the result into NaN.
  Tensor y = RunOk(Resize1D({1, INFINITY, 5}, 2).Attr("mode", std::string("linear"))
                       .Attr("coordinate_transformation_mode", std::string("asymmetric")));
  EXPECT_EQ(y.GetDouble(0), 1.0);
  EXPECT_EQ(y.GetDouble(4), 5.0);
}

TEST(ResizeTest, TfCropAndResizeExtrapolates) {
  Tensor y = RunOk(NodeRunner("Resize").Opset(19).Input(Floats({3}, {1, 2, 3})).Input(Floats({2}, {0.5, 1.5}))
                       .AbsentInput().Input(Int64s({3})).Attr("mode", std::string("linear"))
                       .Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
                       .Attr("extrapolation_value", 9.0f));
  // x_original = 1, 2, 3 (outside [0, 2])
  ExpectDoubles(y, {3}, {2, 3, 9});
}

TEST(ResizeTest, AntialiasWidensTheFilter) {
  const std::vector<double> x = {0, 0, 8, 0, 0, 0, 0, 0};
  Tensor plain = RunOk(Resize1D(x, 0.5f).Attr("mode", std::string("linear")));
  Tensor smooth = RunOk(Resize1D(x, 0.5f).Attr("mode", std::string("linear")).Attr("antialias", int64_t{1}));
  // half_pixel: x_original = 0.5, 2.5, 4.5, 6.5. Plain linear mixes two
  // neighbours; the antialiased triangle spans four (weights 1, 3, 3, 1 / 8).
  ExpectDoubles(plain, {4}, {0, 4, 0, 0});
  ExpectDoubles(smooth, {4}, {1, 3, 0, 0}, 1e-6);
}

TEST(ResizeTest, SizesWithAspectRatioPolicyAndAxes) {
  const Tensor x = Floats({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor y = RunOk(NodeRunner("Resize").Opset(19).Input(x).AbsentInput().AbsentInput().Input(Int64s({4, 4}))
                       .Attr("axes", std::vector<int64_t>{1, 2}).Attr("keep_aspect_ratio_policy", std::string("not_larger")));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 4}));
  Tensor z = RunOk(NodeRunner("Resize").Opset(19).Input(x).AbsentInput().AbsentInput().Input(Int64s({4, 4}))
                       .Attr("axes", std::vector<int64_t>{1, 2}).Attr("keep_aspect_ratio_policy", std::string("not_smaller")));
  EXPECT_EQ(z.shape(), (Shape{1, 4, 8}));
  ExpectError(NodeRunner("Resize").Opset(19).Input(x).AbsentInput().Input(Floats({3}, {1, 1, 1})).Input(Int64s({1, 2, 4})),
              "exactly one");
}

TEST(ResizeTest, HugeSizesAreRefused) {
  const Tensor x = Floats({1, 2}, {1, 2});
  ExpectError(NodeRunner("Resize").Opset(19).Input(x).AbsentInput().AbsentInput()
                  .Input(Int64s({std::numeric_limits<int64_t>::max(), 1}))
                  .Attr("keep_aspect_ratio_policy", std::string("not_smaller")),
              "too large");
  ExpectError(NodeRunner("Resize").Opset(19).Input(x).AbsentInput().Input(Floats({2}, {1, 1e30})), "too large");
}

TEST(ResizeTest, IntegerOutputsRoundHalfToEven) {
  StatusOr<Tensor> x = Tensor::FromDoubles(DataType::kUint8, {2}, {0, 5});
  // half_pixel scale 2: x_original = -0.25, 0.25, 0.75, 1.25 -> 0, 1.25, 3.75, 5
  Tensor y = RunOk(NodeRunner("Resize").Opset(19).Input(*x).AbsentInput().Input(Floats({1}, {2}))
                       .Attr("mode", std::string("linear")));
  ExpectInts(y, {4}, {0, 1, 4, 5});
}

TEST(ResizeTest, NearestCopiesStrings) {
  Tensor y = RunOk(NodeRunner("Resize").Opset(19).Input(Strings({2}, {"a", "b"})).AbsentInput().Input(Floats({1}, {2})));
  EXPECT_EQ(y.strings(), (std::vector<std::string>{"a", "a", "b", "b"}));
}

TEST(UpsampleTest, NearestRepeatsAndLinearIsAsymmetric) {
  Tensor y = RunOk(NodeRunner("Upsample").Opset(9).Input(Floats({1, 2}, {1, 2})).Input(Floats({2}, {1, 2})));
  ExpectDoubles(y, {1, 4}, {1, 1, 2, 2});
  Tensor l = RunOk(NodeRunner("Upsample").Opset(7).Input(Floats({2}, {0, 4})).Attr("mode", std::string("linear"))
                       .Attr("scales", std::vector<float>{2}));
  ExpectDoubles(l, {4}, {0, 2, 4, 4});
  ExpectError(NodeRunner("Upsample").Opset(10).Input(Floats({1}, {1})).Input(Floats({1}, {2})), "deprecated");
}

}  // namespace
}  // namespace parity::ops::tensor
