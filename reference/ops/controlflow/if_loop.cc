// If and Loop: conditional and repeated execution of subgraphs (ONNX
// Operators.md, If and Loop, versions 1 to 25).
#include <string>

#include "reference/ops/common.h"
#include "reference/ops/controlflow/controlflow.h"
#include "reference/ops/controlflow/slicing.h"

namespace parity::ops::controlflow {

DataType DeclaredElementType(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) {
    const int32_t t = type.tensor_type().elem_type();
    return IsKnownDataType(t) ? static_cast<DataType>(t) : DataType::kUndefined;
  }
  if (type.has_sequence_type()) return DeclaredElementType(type.sequence_type().elem_type());
  if (type.has_optional_type()) return DeclaredElementType(type.optional_type().elem_type());
  return DataType::kUndefined;
}

Shape DeclaredShapeOrZero(const onnx::TypeProto& type) {
  Shape shape;
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return shape;
  for (const auto& d : type.tensor_type().shape().dim()) {
    shape.push_back(d.has_dim_value() ? d.dim_value() : 0);
  }
  return shape;
}

namespace {

// The truth value of a single-element tensor (If's cond, Loop's cond).
StatusOr<bool> ReadCondition(const KernelContext& ctx, const Value& value, const char* what) {
  if (!value.is_tensor() || value.tensor().size() != 1 || value.tensor().dtype() == DataType::kString) {
    return ctx.Error(what, " must be a tensor with one element, got ", value.Description());
  }
  return value.tensor().GetDouble(0) != 0.0;
}

// A loop-carried value bound to a body input declared optional is wrapped
// in an optional when it is not one already: a body may declare
// optional(seq) for a value whose first iteration passes an optional and
// whose later iterations pass the body's own seq output (ONNX's
// test_loop16_seq_none does so; its Python reference does not check types).
Value BindToDeclared(const Value& value, const onnx::TypeProto& declared) {
  if (declared.has_optional_type() && !value.is_optional()) return Value::SomeOptional(value);
  return value;
}

StatusOr<Tensor> ScalarTensor(const KernelContext& ctx, DataType dtype, int64_t value) {
  PARITY_ASSIGN_OR_RETURN(Tensor t, Allocate(ctx, dtype, {}));
  t.SetInt64(0, value);
  return t;
}

}  // namespace

StatusOr<std::vector<Value>> If(const KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("input 'cond' is required");
  PARITY_ASSIGN_OR_RETURN(bool cond, ReadCondition(ctx, ctx.input(0), "input 'cond'"));
  const char* branch_name = cond ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = ctx.GetGraph(branch_name);
  if (!branch) return ctx.Error("attribute '", branch_name, "' (a graph) is missing");
  StatusOr<std::vector<Value>> outputs = ctx.RunSubgraph(*branch, {});
  if (!outputs.ok()) return outputs.status().WithContext(ctx.NodeLabel() + ": " + branch_name);
  if (outputs->size() < ctx.output_count()) {
    return ctx.Error(branch_name, " produces ", outputs->size(), " outputs, the node declares ", ctx.output_count());
  }
  outputs->resize(ctx.output_count());
  return outputs;
}

// Loop (Operators.md): M and cond are both optional. When cond is absent the
// body's cond output is ignored ("for loop"); when M is absent only cond
// stops the loop. Scan outputs are stacked along a new leading axis, the
// shape Loop's type inference gives them (the Python reference's np.vstack
// differs for rank-0 and rank >= 2 per-iteration values).
StatusOr<std::vector<Value>> Loop(const KernelContext& ctx) {
  const onnx::GraphProto* body = ctx.GetGraph("body");
  if (!body) return ctx.Error("attribute 'body' (a graph) is missing");
  const int declared_inputs = ctx.node().input_size();
  if (declared_inputs < 2) return ctx.Error("Loop takes at least the inputs M and cond (which may be empty)");
  const size_t carried_count = static_cast<size_t>(declared_inputs - 2);
  if (body->input_size() != static_cast<int>(carried_count) + 2) {
    return ctx.Error("body takes ", body->input_size(), " inputs; expected 2 + ", carried_count,
                     " loop-carried values");
  }
  if (body->output_size() < static_cast<int>(carried_count) + 1) {
    return ctx.Error("body produces ", body->output_size(), " outputs; expected at least 1 + ", carried_count);
  }
  const size_t scan_count = static_cast<size_t>(body->output_size()) - 1 - carried_count;

  const bool has_trip_count = ctx.has_input(0);
  const bool has_cond = ctx.has_input(1);
  int64_t trip_count = 0;
  if (has_trip_count) {
    const Value& m = ctx.input(0);
    if (!m.is_tensor() || m.tensor().size() != 1 || !IsInteger(m.tensor().dtype())) {
      return ctx.Error("input 'M' must be an integer tensor with one element, got ", m.Description());
    }
    trip_count = m.tensor().GetInt64(0);
  }
  bool cond = true;
  if (has_cond) {
    PARITY_ASSIGN_OR_RETURN(cond, ReadCondition(ctx, ctx.input(1), "input 'cond'"));
  }
  if (!has_trip_count && !has_cond) {
    return ctx.Error("Loop with neither M nor cond never terminates");
  }

  std::vector<Value> carried;
  for (size_t i = 0; i < carried_count; ++i) {
    if (!ctx.has_input(2 + i)) return ctx.Error("loop-carried input ", 2 + i, " is absent");
    carried.push_back(ctx.input(2 + i));
  }
  std::vector<std::vector<Tensor>> scans(scan_count);
  int64_t iteration = 0;
  for (; (!has_trip_count || iteration < trip_count) && cond; ++iteration) {
    std::vector<Value> body_inputs;
    PARITY_ASSIGN_OR_RETURN(Tensor iter_num, ScalarTensor(ctx, DataType::kInt64, iteration));
    PARITY_ASSIGN_OR_RETURN(Tensor cond_in, ScalarTensor(ctx, DataType::kBool, cond ? 1 : 0));
    body_inputs.push_back(Value::FromTensor(iter_num));
    body_inputs.push_back(Value::FromTensor(cond_in));
    for (size_t i = 0; i < carried_count; ++i) {
      body_inputs.push_back(BindToDeclared(carried[i], body->input(static_cast<int>(2 + i)).type()));
    }
    StatusOr<std::vector<Value>> outputs = ctx.RunSubgraph(*body, body_inputs);
    if (!outputs.ok()) {
      return outputs.status().WithContext(ctx.NodeLabel() + ": body, iteration " + std::to_string(iteration));
    }
    if (has_cond) {
      PARITY_ASSIGN_OR_RETURN(cond, ReadCondition(ctx, (*outputs)[0], "the body's cond output"));
    }
    for (size_t i = 0; i < carried_count; ++i) carried[i] = (*outputs)[1 + i];
    for (size_t k = 0; k < scan_count; ++k) {
      const Value& v = (*outputs)[1 + carried_count + k];
      if (!v.is_tensor()) return ctx.Error("scan output ", k, " must be a tensor, got ", v.Description());
      scans[k].push_back(v.tensor());
    }
  }

  std::vector<Value> results = std::move(carried);
  for (size_t k = 0; k < scan_count; ++k) {
    const onnx::TypeProto& type = body->output(static_cast<int>(1 + carried_count + k)).type();
    PARITY_ASSIGN_OR_RETURN(Tensor stacked,
                            Stack(ctx, scans[k], 0, DeclaredElementType(type), DeclaredShapeOrZero(type)));
    results.push_back(Value::FromTensor(std::move(stacked)));
  }
  if (results.size() > ctx.output_count()) results.resize(ctx.output_count());
  return results;
}

}  // namespace parity::ops::controlflow
