// Tests of GridSample and AffineGrid (grid_sample.cc).
#include <cmath>

#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::I;
using testing::Make;
using testing::RunError;
using testing::RunOk;

Tensor Image() { return Floats({1, 1, 2, 2}, {1, 2, 3, 4}); }

double Sample(double gx, double gy, const std::string& mode, const std::string& padding, int64_t align,
              int64_t opset = 22) {
  Tensor y = RunOk(NodeRunner("GridSample")
                       .Opset(opset)
                       .Input(Image())
                       .Input(Floats({1, 1, 1, 2}, {gx, gy}))
                       .Attr("mode", mode)
                       .Attr("padding_mode", padding)
                       .Attr("align_corners", align));
  return y.size() == 1 ? y.GetDouble(0) : NAN;
}

TEST(GridSample, CentreInterpolatesAllFourPixels) {
  EXPECT_EQ(Sample(0, 0, "linear", "zeros", 0), 2.5);
  EXPECT_EQ(Sample(0, 0, "bilinear", "zeros", 0, 16), 2.5);
  // Nearest rounds the pixel coordinate 0.5 half to even: pixel (0, 0).
  EXPECT_EQ(Sample(0, 0, "nearest", "zeros", 0), 1);
}

TEST(GridSample, CornerDependsOnAlignCornersAndPadding) {
  EXPECT_EQ(Sample(-1, -1, "linear", "zeros", 1), 1);
  EXPECT_EQ(Sample(-1, -1, "linear", "zeros", 0), 0.25);
  EXPECT_EQ(Sample(-1, -1, "linear", "border", 0), 1);
  EXPECT_EQ(Sample(-1, -1, "linear", "reflection", 0), 1);
  // x = 1 (right edge), y = 0: between rows, at the last column.
  EXPECT_EQ(Sample(1, 0, "linear", "border", 1), 3);
}

TEST(GridSample, CubicReproducesALinearRampInside) {
  Tensor ramp = Floats({1, 1, 1, 4}, {0, 1, 2, 3});
  Tensor y = RunOk(NodeRunner("GridSample")
                       .Opset(20)
                       .Input(ramp)
                       .Input(Floats({1, 1, 1, 2}, {0, 0}))
                       .Attr("mode", std::string("cubic"))
                       .Attr("padding_mode", std::string("border"))
                       .Attr("align_corners", I(1)));
  EXPECT_NEAR(y.GetDouble(0), 1.5, 1e-12);
}

TEST(GridSample, VolumetricNearestCopiesIntegers) {
  Tensor x = Make(DataType::kInt64, {1, 1, 2, 1, 1}, {7, 9});
  Tensor y = RunOk(NodeRunner("GridSample")
                       .Opset(20)
                       .Input(x)
                       .Input(Floats({1, 1, 1, 1, 3}, {0, 0, 1}))
                       .Attr("mode", std::string("nearest"))
                       .Attr("align_corners", I(1)));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{9}));
}

TEST(GridSample, RejectsModeNamesOfAnotherVersion) {
  std::string error = RunError(NodeRunner("GridSample")
                                   .Opset(16)
                                   .Input(Image())
                                   .Input(Floats({1, 1, 1, 2}, {0, 0}))
                                   .Attr("mode", std::string("linear")));
  EXPECT_NE(error.find("mode"), std::string::npos) << error;
}

TEST(AffineGrid, IdentityGivesPixelCentres) {
  Tensor theta = Floats({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  Tensor size = Make(DataType::kInt64, {4}, {1, 1, 2, 2});
  Tensor centres = RunOk(NodeRunner("AffineGrid").Opset(20).Input(theta).Input(size));
  EXPECT_EQ(centres.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(centres.ToDoubles(), (std::vector<double>{-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5}));
  Tensor corners = RunOk(NodeRunner("AffineGrid").Opset(20).Input(theta).Input(size).Attr("align_corners", I(1)));
  EXPECT_EQ(corners.ToDoubles(), (std::vector<double>{-1, -1, 1, -1, -1, 1, 1, 1}));
}

TEST(AffineGrid, ThreeDimensionalTranslation) {
  Tensor theta = Floats({1, 3, 4}, {1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, -1});
  Tensor grid = RunOk(NodeRunner("AffineGrid")
                          .Opset(20)
                          .Input(theta)
                          .Input(Make(DataType::kInt64, {5}, {1, 1, 1, 1, 1}))
                          .Attr("align_corners", I(0)));
  EXPECT_EQ(grid.shape(), (Shape{1, 1, 1, 1, 3}));
  EXPECT_EQ(grid.ToDoubles(), (std::vector<double>{0.5, 0, -1}));
}

}  // namespace
}  // namespace parity::ops::nn
