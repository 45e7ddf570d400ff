// Tests of AveragePool, MaxPool and LpPool (pool.cc).
#include <cmath>

#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::I;
using testing::Ints;
using testing::Iota;
using testing::Make;
using testing::RunAll;
using testing::RunError;
using testing::RunOk;

TEST(MaxPool, ValuesAndRowMajorIndices) {
  StatusOr<std::vector<Value>> out =
      RunAll(NodeRunner("MaxPool").Opset(12).Input(Iota({1, 1, 3, 3})).Outputs(2).Attr("kernel_shape", Ints({2, 2})));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().ToDoubles(), (std::vector<double>{4, 5, 7, 8}));
  EXPECT_EQ((*out)[1].tensor().ToInt64s(), (std::vector<int64_t>{4, 5, 7, 8}));
}

TEST(MaxPool, ColumnMajorIndicesIncludeThePlaneOffset) {
  StatusOr<std::vector<Value>> out = RunAll(NodeRunner("MaxPool")
                                                .Opset(12)
                                                .Input(Iota({1, 2, 3, 3}))
                                                .Outputs(2)
                                                .Attr("kernel_shape", Ints({2, 2}))
                                                .Attr("storage_order", I(1)));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[1].tensor().ToInt64s(), (std::vector<int64_t>{4, 7, 5, 8, 13, 16, 14, 17}));
}

TEST(MaxPool, DilationsAndInt8) {
  Tensor y = RunOk(NodeRunner("MaxPool")
                       .Opset(12)
                       .Input(Make(DataType::kInt8, {1, 1, 5}, {5, -3, 2, 9, -1}))
                       .Attr("kernel_shape", Ints({2}))
                       .Attr("dilations", Ints({2})));
  EXPECT_EQ(y.dtype(), DataType::kInt8);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{5, 9, 2}));
}

TEST(MaxPool, NanPropagates) {
  Tensor y = RunOk(NodeRunner("MaxPool")
                       .Opset(22)
                       .Input(Floats({1, 1, 3}, {1, NAN, 2}))
                       .Attr("kernel_shape", Ints({2})));
  ASSERT_EQ(y.size(), 2);
  EXPECT_TRUE(std::isnan(y.GetDouble(0)));
  EXPECT_TRUE(std::isnan(y.GetDouble(1)));
}

TEST(AveragePool, CountIncludePadChangesTheDivisor) {
  auto run = [](int64_t include) {
    return RunOk(NodeRunner("AveragePool")
                     .Opset(19)
                     .Input(Floats({1, 1, 2}, {2, 4}))
                     .Attr("kernel_shape", Ints({2}))
                     .Attr("pads", Ints({1, 1}))
                     .Attr("count_include_pad", include))
        .ToDoubles();
  };
  EXPECT_EQ(run(0), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(run(1), (std::vector<double>{1, 3, 2}));
}

TEST(AveragePool, CeilModeWindowPastThePaddingIsNotCounted) {
  for (int64_t include : {0, 1}) {
    Tensor y = RunOk(NodeRunner("AveragePool")
                         .Opset(19)
                         .Input(Iota({1, 1, 5}))
                         .Attr("kernel_shape", Ints({2}))
                         .Attr("strides", Ints({2}))
                         .Attr("ceil_mode", I(1))
                         .Attr("count_include_pad", include));
    EXPECT_EQ(y.ToDoubles(), (std::vector<double>{0.5, 2.5, 4})) << include;
  }
}

TEST(AveragePool, CeilModeDropsAWindowStartingInTheEndPadding) {
  // Input 4, kernel 2, stride 3, pads 1/1: ceil gives 3 windows, but the third
  // would start at 6 - 1 = 5, inside the end padding, so it is dropped.
  Tensor y = RunOk(NodeRunner("AveragePool")
                       .Opset(19)
                       .Input(Iota({1, 1, 4}))
                       .Attr("kernel_shape", Ints({2}))
                       .Attr("strides", Ints({3}))
                       .Attr("pads", Ints({1, 1}))
                       .Attr("ceil_mode", I(1)));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{0, 2.5}));
}

TEST(AveragePool, SameUpper) {
  Tensor y = RunOk(NodeRunner("AveragePool")
                       .Opset(11)
                       .Input(Floats({1, 1, 3}, {1, 2, 3}))
                       .Attr("kernel_shape", Ints({2}))
                       .Attr("auto_pad", std::string("SAME_UPPER")));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1.5, 2.5, 3}));
}

TEST(LpPool, NormOfEachWindow) {
  Tensor y = RunOk(NodeRunner("LpPool").Opset(18).Input(Floats({1, 1, 2}, {3, -4})).Attr("kernel_shape", Ints({2})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{5}));
}

TEST(LpPool, VersionOneTakesAFloatP) {
  Tensor y = RunOk(NodeRunner("LpPool")
                       .Opset(1)
                       .Input(Floats({1, 1, 2}, {3, -4}))
                       .Attr("kernel_shape", Ints({2}))
                       .Attr("p", 1.0f));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{7}));
}

TEST(Pool, RequiresKernelShape) {
  std::string error = RunError(NodeRunner("AveragePool").Opset(19).Input(Iota({1, 1, 3})));
  EXPECT_NE(error.find("kernel_shape"), std::string::npos) << error;
}

TEST(Pool, RejectsUnknownAutoPad) {
  std::string error = RunError(
      NodeRunner("MaxPool").Opset(12).Input(Iota({1, 1, 3})).Attr("kernel_shape", Ints({2})).Attr("auto_pad", std::string("SAME")));
  EXPECT_NE(error.find("auto_pad"), std::string::npos) << error;
}

}  // namespace
}  // namespace parity::ops::nn
