// Tests of Tensor creation limits, element conversion and rounding.
#include "reference/core/tensor.h"

#include <cmath>

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(TensorTest, CreateRefusesOverflowingShapeBeforeAllocating) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kFloat, {int64_t{1} << 40, int64_t{1} << 40});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kResourceExhausted);
}

TEST(TensorTest, CreateRefusesSizeOverLimit) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kFloat, {1000000, 1000000});  // 10^12 elements
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("allocation limit"), std::string::npos) << t.status().message();
}

TEST(TensorTest, CreateRefusesNegativeDimension) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kInt64, {2, -1});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("negative dimension"), std::string::npos);
}

TEST(TensorTest, FromDoublesRoundsOnceToFloat32) {
  // 1 + 2^-24 + 2^-60 lies just above the midpoint between two float32s;
  // one rounding from double gives the upper neighbour.
  const double v = 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -52);
  StatusOr<Tensor> t = Tensor::FromDoubles(DataType::kFloat, {1}, {v});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data<float>()[0], 1.0f + std::ldexp(1.0f, -23));
}

TEST(TensorTest, IntegerWritesWrapToWidth) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kInt4, {3});
  ASSERT_TRUE(t.ok());
  t->SetInt64(0, 7);
  t->SetInt64(1, 8);    // wraps to -8
  t->SetInt64(2, -9);   // wraps to 7
  EXPECT_EQ(t->GetInt64(0), 7);
  EXPECT_EQ(t->GetInt64(1), -8);
  EXPECT_EQ(t->GetInt64(2), 7);
}

TEST(TensorTest, Uint64KeepsFullRange) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kUint64, {1});
  ASSERT_TRUE(t.ok());
  t->SetUint64(0, UINT64_MAX);
  EXPECT_EQ(t->GetUint64(0), UINT64_MAX);
}

TEST(TensorTest, ReshapedSharesData) {
  Tensor t = Tensor::FromInt64s({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = t.Reshaped({3, 2});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.data<int64_t>(), t.data<int64_t>());
  EXPECT_EQ(r.GetInt64(5), 6);
}

}  // namespace
}  // namespace parity
