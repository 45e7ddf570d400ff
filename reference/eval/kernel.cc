// KernelContext: attribute access and input checks shared by all kernels.
#include "reference/eval/kernel.h"

#include "reference/model/graph.h"
#include "reference/model/tensor_io.h"

namespace parity {

Status NodeKernels::HostReads(const Value& value) const {
  if (!host_reads) return Status::Ok();
  switch (value.kind()) {
    case Value::Kind::kTensor: return value.tensor().defined() ? host_reads(value.tensor()) : Status::Ok();
    case Value::Kind::kSequence:
      for (const Value& e : value.sequence()) PARITY_RETURN_IF_ERROR(HostReads(e));
      return Status::Ok();
    case Value::Kind::kOptional: return value.has_element() ? HostReads(value.element()) : Status::Ok();
  }
  return Status::Ok();
}

const Tensor& KernelContext::tensor(size_t i) const { return inputs_[i]->tensor(); }

StatusOr<const Tensor*> KernelContext::RequireTensor(size_t i) const {
  if (!has_input(i)) return Error("input ", i, " is required but absent");
  if (!inputs_[i]->is_tensor()) return Error("input ", i, " must be a tensor, got ", inputs_[i]->Description());
  if (!inputs_[i]->tensor().defined()) return Error("input ", i, " is an undefined tensor");
  return &inputs_[i]->tensor();
}

const onnx::AttributeProto* KernelContext::attribute(std::string_view name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t KernelContext::GetInt(std::string_view name, int64_t fallback) const {
  const auto* a = attribute(name);
  return a && a->has_i() ? a->i() : fallback;
}

float KernelContext::GetFloat(std::string_view name, float fallback) const {
  const auto* a = attribute(name);
  return a && a->has_f() ? a->f() : fallback;
}

std::string KernelContext::GetString(std::string_view name, std::string fallback) const {
  const auto* a = attribute(name);
  return a && a->has_s() ? a->s() : fallback;
}

std::vector<int64_t> KernelContext::GetInts(std::string_view name) const {
  const auto* a = attribute(name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> KernelContext::GetFloats(std::string_view name) const {
  const auto* a = attribute(name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}

std::vector<std::string> KernelContext::GetStrings(std::string_view name) const {
  const auto* a = attribute(name);
  if (!a) return {};
  return {a->strings().begin(), a->strings().end()};
}

StatusOr<Tensor> KernelContext::GetTensor(std::string_view name) const {
  const auto* a = attribute(name);
  if (!a || !a->has_t()) return Error("attribute '", name, "' (a tensor) is missing");
  StatusOr<Tensor> t = TensorFromProto(a->t());
  if (!t.ok()) return t.status().WithContext(NodeLabel() + ": attribute '" + std::string(name) + "'");
  return t;
}

const onnx::GraphProto* KernelContext::GetGraph(std::string_view name) const {
  const auto* a = attribute(name);
  return a && a->has_g() ? &a->g() : nullptr;
}

std::string KernelContext::NodeLabel() const { return graph::DescribeNode(node_); }

}  // namespace parity
