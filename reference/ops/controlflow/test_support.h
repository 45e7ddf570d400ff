// Test-only helpers for the control-flow kernels (header-only, included by
// the tests alone): the shared builders of reference/ops/test_builders.h,
// hand-built subgraphs and a registry holding this
// family's kernels plus tiny Add, Identity and Less primitives, so that the
// tests do not depend on other families' progress.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/value.h"
#include "reference/eval/registry.h"
#include "reference/ops/test_builders.h"
#include "reference/ops/common.h"
#include "reference/ops/families.h"

namespace parity::ops::controlflow::testing {

struct NodeSpec {
  std::string op_type;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

// A value declared with an element type and, optionally, a static shape.
struct ValueSpec {
  ValueSpec(std::string n, DataType t = DataType::kFloat, std::vector<int64_t> s = {}, bool shaped = false,
            bool seq = false)
      : name(std::move(n)), dtype(t), shape(std::move(s)), has_shape(shaped), sequence(seq) {}
  ValueSpec(const char* n) : ValueSpec(std::string(n)) {}
  std::string name;
  DataType dtype = DataType::kFloat;
  std::vector<int64_t> shape;  // empty with has_shape=false: no shape
  bool has_shape = false;
  bool sequence = false;
};

namespace detail {

inline void Declare(const ValueSpec& spec, onnx::ValueInfoProto* info) {
  info->set_name(spec.name);
  onnx::TypeProto* type = info->mutable_type();
  onnx::TypeProto_Tensor* tensor =
      spec.sequence ? type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()
                    : type->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(spec.dtype));
  if (spec.has_shape) {
    auto* shape = tensor->mutable_shape();
    for (int64_t d : spec.shape) shape->add_dim()->set_dim_value(d);
  }
}

inline StatusOr<std::vector<Value>> TestAdd(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(ctx, {a->shape(), b->shape()}));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, a->dtype(), shape));
  BroadcastIndexer ia(a->shape(), shape), ib(b->shape(), shape);
  for (int64_t i = 0; i < out.size(); ++i) out.SetDouble(i, a->GetDouble(ia(i)) + b->GetDouble(ib(i)));
  return Single(std::move(out));
}

inline StatusOr<std::vector<Value>> TestLess(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kBool, {}));
  out.SetInt64(0, a->GetDouble(0) < b->GetDouble(0) ? 1 : 0);
  return Single(std::move(out));
}

inline StatusOr<std::vector<Value>> TestIdentity(const KernelContext& ctx) { return std::vector<Value>{ctx.input(0)}; }

}  // namespace detail

inline onnx::GraphProto MakeGraph(const std::vector<ValueSpec>& inputs, const std::vector<ValueSpec>& outputs,
                           const std::vector<NodeSpec>& nodes) {
  onnx::GraphProto graph;
  graph.set_name("body");
  for (const auto& i : inputs) detail::Declare(i, graph.add_input());
  for (const auto& o : outputs) detail::Declare(o, graph.add_output());
  int count = 0;
  for (const auto& n : nodes) {
    onnx::NodeProto* node = graph.add_node();
    node->set_name("n" + std::to_string(count++));
    node->set_op_type(n.op_type);
    for (const auto& i : n.inputs) node->add_input(i);
    for (const auto& o : n.outputs) node->add_output(o);
  }
  return graph;
}

inline const OpRegistry& TestRegistry() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterControlFlowOps(*r);
    r->Register("Add", 1, detail::TestAdd);
    r->Register("Less", 1, detail::TestLess);
    r->Register("Identity", 1, detail::TestIdentity);
    return r;
  }();
  return *registry;
}

using testing_util::Doubles;
using testing_util::Floats;
using testing_util::Int64Tensor;

inline Tensor Bool(bool value) { return testing_util::MakeBools({}, {value ? 1 : 0}); }

// The elements of a tensor value.
inline std::vector<double> Doubles(const Value& v) { return Doubles(v.tensor()); }

}  // namespace parity::ops::controlflow::testing
