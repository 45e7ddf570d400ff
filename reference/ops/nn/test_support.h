// Small helpers for the nn family's kernel tests: the shared builders of
// reference/ops/test_builders.h, plus attribute spellings, Iota, and runs
// against the reference registry.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/ops/node_runner.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::nn::testing {

using testing_util::Floats;
using testing_util::Make;

// 0, 1, 2, ... as float32 of `shape`.
inline Tensor Iota(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return Floats(std::move(shape), v);
}

// Attribute values spelled without overload ambiguity.
inline std::vector<int64_t> Ints(std::initializer_list<int64_t> v) { return v; }
inline int64_t I(int64_t v) { return v; }

// Runs the node and returns its outputs.
inline StatusOr<std::vector<Value>> RunAll(const NodeRunner& runner) { return runner.Run(); }

// Runs the node and returns its first output; fails the test on an error.
inline Tensor RunOk(const NodeRunner& runner) { return testing_util::RunOk(runner); }

// The error message of a run that must fail (empty if it succeeded).
inline std::string RunError(const NodeRunner& runner) { return testing_util::RunError(runner); }

}  // namespace parity::ops::nn::testing
