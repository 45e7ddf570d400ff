// Tests of RoiAlign and MaxRoiPool (roi.cc).
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::I;
using testing::Make;
using testing::RunError;
using testing::RunOk;

Tensor Image() { return Floats({1, 1, 2, 2}, {1, 2, 3, 4}); }

double Align(int64_t opset, const std::string& transform, const std::string& mode) {
  NodeRunner runner("RoiAlign");
  runner.Opset(opset)
      .Input(Image())
      .Input(Floats({1, 4}, {0, 0, 1, 1}))
      .Input(Make(DataType::kInt64, {1}, {0}))
      .Attr("sampling_ratio", I(1))
      .Attr("mode", mode);
  if (!transform.empty()) runner.Attr("coordinate_transformation_mode", transform);
  Tensor y = RunOk(runner);
  return y.size() == 1 ? y.GetDouble(0) : -1;
}

TEST(RoiAlign, OutputHalfPixelSamplesTheRoiCentre) {
  EXPECT_EQ(Align(16, "output_half_pixel", "avg"), 2.5);
  EXPECT_EQ(Align(10, "", "avg"), 2.5);  // opset 10 has only this mode
}

TEST(RoiAlign, HalfPixelShiftsByHalfAPixel) {
  EXPECT_EQ(Align(16, "", "avg"), 1);  // the default from opset 16
}

TEST(RoiAlign, MaxTakesTheLargestWeightedCorner) {
  EXPECT_EQ(Align(22, "output_half_pixel", "max"), 1);
}

TEST(RoiAlign, RejectsBatchIndexOutOfRange) {
  std::string error = RunError(NodeRunner("RoiAlign")
                                   .Opset(16)
                                   .Input(Image())
                                   .Input(Floats({1, 4}, {0, 0, 1, 1}))
                                   .Input(Make(DataType::kInt64, {1}, {3})));
  EXPECT_NE(error.find("batch index"), std::string::npos) << error;
}

TEST(MaxRoiPool, MaxOverEachBin) {
  Tensor y = RunOk(NodeRunner("MaxRoiPool")
                       .Opset(1)
                       .Input(Image())
                       .Input(Floats({1, 5}, {0, 0, 0, 1, 1}))
                       .Attr("pooled_shape", testing::Ints({1, 2})));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{3, 4}));
}

}  // namespace
}  // namespace parity::ops::nn
