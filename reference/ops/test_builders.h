// Test-only builders shared by the operator families' kernel tests
// (header-only, included by *_test.cc alone): tensors from literal values,
// running a NodeRunner that must succeed or fail, and values read back.
// Each family's test header re-exports these and adds its own helpers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference/core/tensor.h"
#include "reference/ops/node_runner.h"

namespace parity::testing_util {

// A tensor of `dtype` holding `values`, each rounded once to the type (as
// Tensor::FromDoubles does); fails the test if the tensor cannot be made.
inline Tensor Make(DataType dtype, Shape shape, const std::vector<double>& values) {
  StatusOr<Tensor> t = Tensor::FromDoubles(dtype, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : Tensor();
}
// The same, 1-D.
inline Tensor Make(DataType dtype, const std::vector<double>& values) {
  return Make(dtype, {static_cast<int64_t>(values.size())}, values);
}

// A float32 tensor of `shape`.
inline Tensor Floats(Shape shape, const std::vector<double>& values) {
  return Make(DataType::kFloat, std::move(shape), values);
}

// An integer tensor of `dtype` holding `values` exactly (wrapped to the
// type's width), without a round trip through double.
inline Tensor MakeInts(DataType dtype, Shape shape, const std::vector<int64_t>& values) {
  StatusOr<Tensor> t = Tensor::Create(dtype, std::move(shape));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  for (size_t i = 0; i < values.size(); ++i) t->SetInt64(static_cast<int64_t>(i), values[i]);
  return std::move(t).value();
}
// The same, 1-D.
inline Tensor MakeInts(DataType dtype, const std::vector<int64_t>& values) {
  return MakeInts(dtype, {static_cast<int64_t>(values.size())}, values);
}

// An int64 tensor of `shape` (`values` must fill it).
inline Tensor Int64Tensor(Shape shape, const std::vector<int64_t>& values) {
  return Tensor::FromInt64s(std::move(shape), values);
}

// A bool tensor of `shape`; `values` are 0 or 1.
inline Tensor MakeBools(Shape shape, const std::vector<int64_t>& values) {
  return MakeInts(DataType::kBool, std::move(shape), values);
}

inline Tensor MakeStrings(Shape shape, const std::vector<std::string>& values) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kString, std::move(shape));
  t->mutable_strings() = values;
  return std::move(t).value();
}

// Each of `got` within `tol` of `want`, element by element.
inline void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// Runs `runner` and returns its first output; fails the test on an error.
inline Tensor RunOk(const NodeRunner& runner) {
  StatusOr<Tensor> out = runner.RunOne();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : Tensor();
}

// Runs `runner` and returns all its outputs; fails the test on an error
// (and returns none).
inline std::vector<Value> RunAllOk(const NodeRunner& runner) {
  StatusOr<std::vector<Value>> out = runner.Run();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : std::vector<Value>{};
}

// Runs `runner`, expects the run to fail, and returns the error message
// (empty if it succeeded).
inline std::string RunError(const NodeRunner& runner) {
  StatusOr<std::vector<Value>> out = runner.Run();
  EXPECT_FALSE(out.ok()) << "expected an error, got " << (out.ok() ? out->size() : 0) << " outputs";
  return out.ok() ? std::string() : out.status().message();
}

// A tensor's elements read back.
inline std::vector<double> Doubles(const Tensor& t) { return t.ToDoubles(); }
inline std::vector<int64_t> Int64s(const Tensor& t) { return t.ToInt64s(); }

}  // namespace parity::testing_util
