// Helpers for the elementwise kernel tests: the shared builders of
// reference/ops/test_builders.h, plus a quiet NaN, uint64 tensors and
// running one node at a given opset.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/ops/node_runner.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::elementwise_test {

using testing_util::Doubles;
using testing_util::Int64s;
using testing_util::Make;
using testing_util::MakeBools;
using testing_util::MakeInts;
using testing_util::MakeStrings;
using testing_util::RunError;
using testing_util::RunOk;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline Tensor MakeUint64s(const std::vector<uint64_t>& values) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kUint64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t->SetUint64(static_cast<int64_t>(i), values[i]);
  return std::move(t).value();
}

// A runner of `op` at `opset` with the given inputs.
inline NodeRunner Node(const std::string& op, int64_t opset, const std::vector<Tensor>& inputs) {
  NodeRunner runner(op);
  runner.Opset(opset);
  for (const Tensor& t : inputs) runner.Input(t);
  return runner;
}

}  // namespace parity::ops::elementwise_test
