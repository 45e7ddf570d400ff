// Small builders and matchers shared by the tensor family's unit tests.
#pragma once

#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference/core/tensor.h"
#include "reference/ops/node_runner.h"

namespace parity::ops::tensor::testing {

inline Tensor Floats(Shape shape, const std::vector<double>& values, DataType dtype = DataType::kFloat) {
  StatusOr<Tensor> t = Tensor::FromDoubles(dtype, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

inline Tensor Ints(Shape shape, const std::vector<int64_t>& values) { return Tensor::FromInt64s(std::move(shape), values); }

// A 1-D int64 tensor.
inline Tensor Int64s(const std::vector<int64_t>& values) {
  return Tensor::FromInt64s({static_cast<int64_t>(values.size())}, values);
}

// 0, 1, ..., n - 1.
inline std::vector<double> Iota(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

inline Tensor Strings(Shape shape, const std::vector<std::string>& values) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kString, std::move(shape));
  EXPECT_TRUE(t.ok());
  if (!t.ok()) return Tensor();
  t->mutable_strings() = values;
  return *t;
}

// Runs the node and returns its first output, failing the test on error.
inline Tensor RunOk(const NodeRunner& runner) {
  StatusOr<Tensor> out = runner.RunOne();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : Tensor();
}

// Runs the node and expects an error whose message contains `fragment`.
inline void ExpectError(const NodeRunner& runner, const std::string& fragment) {
  StatusOr<std::vector<Value>> out = runner.Run();
  ASSERT_FALSE(out.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(out.status().message().find(fragment), std::string::npos) << out.status().ToString();
}

inline void ExpectDoubles(const Tensor& t, const Shape& shape, const std::vector<double>& values,
                          double tolerance = 0.0) {
  EXPECT_EQ(t.shape(), shape);
  std::vector<double> got = t.ToDoubles();
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(got[i], values[i], tolerance) << "element " << i;
}

inline void ExpectInts(const Tensor& t, const Shape& shape, const std::vector<int64_t>& values) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.ToInt64s(), values);
}

}  // namespace parity::ops::tensor::testing
