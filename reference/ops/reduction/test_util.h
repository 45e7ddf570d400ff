// Small helpers for the reduction family's kernel tests: the shared builders
// of reference/ops/test_builders.h, plus reading output `index` and
// comparing within a tolerance.
#pragma once

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "reference/core/tensor.h"
#include "reference/ops/node_runner.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::testing {

using testing_util::Floats;
using testing_util::Int64Tensor;
using testing_util::Make;

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
