// The overflow-checked size rule: every product and sum that does not fit is
// a status, never a wrapped value.
#include "reference/core/checked_size.h"

#include <limits>

#include <gtest/gtest.h>

namespace parity {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CheckedSizeTest, ProductsAndSumsThatFitAreExact) {
  EXPECT_EQ(*CheckedProduct({3, 4, 5}, "dims"), 60);
  EXPECT_EQ(*CheckedProduct({}, "scalar"), 1);
  EXPECT_EQ(*CheckedProduct({0, kMax}, "empty"), 0);
  EXPECT_EQ(*CheckedSum(kMax - 1, 1, "offset + length"), kMax);
  EXPECT_EQ(*PackedByteCount(5, 4, "int4"), 3);
  EXPECT_EQ(*PackedByteCount(3, 6, "float6"), 3);
}

TEST(CheckedSizeTest, OverflowAndNegativeFactorsAreErrorsNamingWhat) {
  StatusOr<int64_t> product = CheckedProduct({int64_t{1} << 32, int64_t{1} << 32}, "tensor 'w' element count");
  ASSERT_FALSE(product.ok());
  EXPECT_EQ(product.status().message(), "tensor 'w' element count overflows a 64-bit size");
  EXPECT_FALSE(CheckedProduct({-1, 4}, "dims").ok());
  StatusOr<int64_t> sum = CheckedSum(kMax, 1, "external data offset + length");
  ASSERT_FALSE(sum.ok());
  EXPECT_NE(sum.status().message().find("offset + length overflows"), std::string::npos);
  EXPECT_FALSE(PackedByteCount(kMax / 4, 8, "bits").ok());
  EXPECT_FALSE(CheckedMul(kMax, 2).has_value());
  EXPECT_FALSE(CheckedAdd(kMax, 1).has_value());
}

}  // namespace
}  // namespace parity
