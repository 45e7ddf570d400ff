// Small helpers for the reduction family's kernel tests: building tensors
// from literals and reading results back.
#pragma once

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "reference/core/tensor.h"
#include "reference/eval/node_runner.h"

namespace parity::ops::testing {

inline Tensor Make(DataType dtype, Shape shape, const std::vector<double>& values) {
  StatusOr<Tensor> t = Tensor::FromDoubles(dtype, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}
inline Tensor Floats(Shape shape, const std::vector<double>& values) {
  return Make(DataType::kFloat, std::move(shape), values);
}
inline Tensor Ints(Shape shape, const std::vector<int64_t>& values) {
  return Tensor::FromInt64s(std::move(shape), values);
}

// Runs the node and returns output `index`, failing the test on an error.
inline Tensor RunOutput(const NodeRunner& runner, size_t index = 0) {
  StatusOr<std::vector<Value>> out = runner.Run();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok() || out->size() <= index) return Tensor();
  return (*out)[index].tensor();
}

// Expects every element of `t` to be within `tol` of `expected` (NaN matches NaN).
inline void ExpectNear(const Tensor& t, const Shape& shape, const std::vector<double>& expected, double tol = 1e-6) {
  EXPECT_EQ(t.shape(), shape);
  ASSERT_EQ(t.size(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(t.GetDouble(i))) << "element " << i << " is " << t.GetDouble(i);
    } else {
      EXPECT_NEAR(t.GetDouble(i), expected[i], tol) << "element " << i;
    }
  }
}

}  // namespace parity::ops::testing
