// Helpers for the elementwise kernel tests: tensors from literal values,
// values back out, and running one node at a given opset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference/core/tensor.h"
#include "reference/eval/node_runner.h"

namespace parity::ops::elementwise_test {

// A tensor of `dtype` holding `values`, each rounded once to the type.
inline Tensor Make(DataType dtype, Shape shape, const std::vector<double>& values) {
  StatusOr<Tensor> t = Tensor::FromDoubles(dtype, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : Tensor();
}
inline Tensor Make(DataType dtype, const std::vector<double>& values) {
  return Make(dtype, {static_cast<int64_t>(values.size())}, values);
}

// An integer tensor holding `values` exactly (wrapped to the type's width).
inline Tensor MakeInts(DataType dtype, Shape shape, const std::vector<int64_t>& values) {
  StatusOr<Tensor> t = Tensor::Create(dtype, std::move(shape));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  for (size_t i = 0; i < values.size(); ++i) t->SetInt64(static_cast<int64_t>(i), values[i]);
  return std::move(t).value();
}
inline Tensor MakeInts(DataType dtype, const std::vector<int64_t>& values) {
  return MakeInts(dtype, {static_cast<int64_t>(values.size())}, values);
}

inline Tensor MakeUint64s(const std::vector<uint64_t>& values) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kUint64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t->SetUint64(static_cast<int64_t>(i), values[i]);
  return std::move(t).value();
}

inline Tensor MakeStrings(Shape shape, const std::vector<std::string>& values) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kString, std::move(shape));
  t->mutable_strings() = values;
  return std::move(t).value();
}

inline Tensor MakeBools(Shape shape, const std::vector<int64_t>& values) {
  return MakeInts(DataType::kBool, std::move(shape), values);
}

// Runs `runner` and returns its first output; fails the test on an error.
inline Tensor RunOk(const NodeRunner& runner) {
  StatusOr<Tensor> out = runner.RunOne();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : Tensor();
}

// Runs `runner`, expects an error, and returns its message.
inline std::string RunError(const NodeRunner& runner) {
  StatusOr<Tensor> out = runner.RunOne();
  EXPECT_FALSE(out.ok()) << "expected an error, got " << (out.ok() ? out->Description() : "");
  return out.ok() ? "" : out.status().message();
}

// A runner of `op` at `opset` with the given inputs.
inline NodeRunner Node(const std::string& op, int64_t opset, const std::vector<Tensor>& inputs) {
  NodeRunner runner(op);
  runner.Opset(opset);
  for (const Tensor& t : inputs) runner.Input(t);
  return runner;
}

inline std::vector<double> Doubles(const Tensor& t) { return t.ToDoubles(); }
inline std::vector<int64_t> Ints(const Tensor& t) { return t.ToInt64s(); }

}  // namespace parity::ops::elementwise_test
