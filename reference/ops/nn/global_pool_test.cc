// Tests of GlobalAveragePool, GlobalMaxPool, GlobalLpPool and MaxUnpool (global_pool.cc).
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::Ints;
using testing::Make;
using testing::RunError;
using testing::RunOk;

Tensor Planes() { return Floats({1, 2, 2, 2}, {1, 2, 3, 4, -5, 0, 3, 4}); }

TEST(GlobalPool, AverageMaxAndLpPerPlane) {
  Tensor avg = RunOk(NodeRunner("GlobalAveragePool").Opset(22).Input(Planes()));
  EXPECT_EQ(avg.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(avg.ToDoubles(), (std::vector<double>{2.5, 0.5}));
  Tensor max = RunOk(NodeRunner("GlobalMaxPool").Opset(1).Input(Planes()));
  EXPECT_EQ(max.ToDoubles(), (std::vector<double>{4, 4}));
  Tensor lp = RunOk(NodeRunner("GlobalLpPool").Opset(2).Input(Floats({1, 1, 2}, {3, -4})));
  EXPECT_EQ(lp.ToDoubles(), (std::vector<double>{5}));
  Tensor l1 = RunOk(NodeRunner("GlobalLpPool").Opset(2).Input(Floats({1, 1, 2}, {3, -4})).Attr("p", testing::I(1)));
  EXPECT_EQ(l1.ToDoubles(), (std::vector<double>{7}));
}

TEST(MaxUnpool, ScattersToIndexedPositions) {
  Tensor y = RunOk(NodeRunner("MaxUnpool")
                       .Opset(11)
                       .Input(Floats({1, 1, 2, 2}, {5, 6, 7, 8}))
                       .Input(Make(DataType::kInt64, {1, 1, 2, 2}, {0, 3, 8, 15}))
                       .Attr("kernel_shape", Ints({2, 2}))
                       .Attr("strides", Ints({2, 2})));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  std::vector<double> want(16, 0.0);
  want[0] = 5;
  want[3] = 6;
  want[8] = 7;
  want[15] = 8;
  EXPECT_EQ(y.ToDoubles(), want);
}

TEST(MaxUnpool, OutputShapeKeepsCoordinatesOfTheInferredShape) {
  // Inferred shape 2x2: index 3 is (1, 1), which stays (1, 1) in the 2x3 output.
  Tensor y = RunOk(NodeRunner("MaxUnpool")
                       .Opset(11)
                       .Input(Floats({1, 1, 1, 1}, {9}))
                       .Input(Make(DataType::kInt64, {1, 1, 1, 1}, {3}))
                       .Input(Make(DataType::kInt64, {4}, {1, 1, 2, 3}))
                       .Attr("kernel_shape", Ints({2, 2})));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 3}));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{0, 0, 0, 0, 9, 0}));
}

TEST(MaxUnpool, RejectsIndexOutsideTheOutput) {
  std::string error = RunError(NodeRunner("MaxUnpool")
                                   .Opset(11)
                                   .Input(Floats({1, 1, 1, 1}, {9}))
                                   .Input(Make(DataType::kInt64, {1, 1, 1, 1}, {4}))
                                   .Attr("kernel_shape", Ints({2, 2})));
  EXPECT_NE(error.find("outside"), std::string::npos) << error;
}

}  // namespace
}  // namespace parity::ops::nn
