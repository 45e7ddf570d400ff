// Small helpers for the nn family's kernel tests: the shared builders of
// reference/eval/test_builders.h, plus attribute spellings, Iota, and runs
// against the reference registry.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/node_runner.h"
#include "reference/eval/test_builders.h"

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

// The runner with the reference registry named explicitly: this also makes
// the test binary link register_all.o, which the static-library order of the
// build would otherwise leave out (parity_core refers to it, but comes later).
inline NodeRunner WithReference(const NodeRunner& runner) {
  NodeRunner r = runner;
  r.Registry(&ReferenceRegistry());
  return r;
}

// Runs the node and returns its outputs.
inline StatusOr<std::vector<Value>> RunAll(const NodeRunner& runner) { return WithReference(runner).Run(); }

// Runs the node and returns its first output; fails the test on an error.
inline Tensor RunOk(const NodeRunner& runner) { return testing_util::RunOk(WithReference(runner)); }

// The error message of a run that must fail (empty if it succeeded).
inline std::string RunError(const NodeRunner& runner) { return testing_util::RunError(WithReference(runner)); }

}  // namespace parity::ops::nn::testing
