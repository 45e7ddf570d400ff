// Small helpers for the nn family's kernel tests: building tensors from
// literal values and reading results back.
#pragma once

#include <vector>

#include <gtest/gtest.h>

#include "reference/core/tensor.h"
#include "reference/eval/node_runner.h"

namespace parity::ops::nn::testing {

// A tensor of `dtype` holding `values` (rounded once, as FromDoubles does).
inline Tensor Make(DataType dtype, Shape shape, const std::vector<double>& values) {
  StatusOr<Tensor> t = Tensor::FromDoubles(dtype, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : Tensor();
}

inline Tensor Floats(Shape shape, const std::vector<double>& values) {
  return Make(DataType::kFloat, std::move(shape), values);
}

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
inline Tensor RunOk(const NodeRunner& runner) {
  StatusOr<Tensor> out = WithReference(runner).RunOne();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : Tensor();
}

// The error message of a run that must fail (empty if it succeeded).
inline std::string RunError(const NodeRunner& runner) {
  StatusOr<std::vector<Value>> out = WithReference(runner).Run();
  EXPECT_FALSE(out.ok()) << "expected an error";
  return out.ok() ? std::string() : out.status().message();
}

}  // namespace parity::ops::nn::testing
