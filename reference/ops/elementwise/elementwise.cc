// Type checks, operand reading and broadcasting shared by the elementwise kernels.
#include "reference/ops/elementwise/elementwise.h"

#include <utility>

namespace parity::ops {

std::string TypeSet::ToString() const {
  std::string out = "{";
  for (int32_t k = 1; k <= kMaxDataType; ++k) {
    const auto t = static_cast<DataType>(k);
    if (!Contains(t)) continue;
    if (out.size() > 1) out += ", ";
    out += DataTypeName(t);
  }
  return out + "}";
}

void RegisterVersions(OpRegistry& registry, std::string_view op_type, ElementwiseKernel kernel,
                      std::initializer_list<OpVersion> versions) {
  for (const OpVersion& version : versions) {
    registry.Register(op_type, version.since_version,
                      [kernel, version](const KernelContext& ctx) { return kernel(ctx, version); });
  }
}

StatusOr<const Tensor*> TypedInput(const KernelContext& ctx, size_t i, TypeSet allowed) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
  if (!allowed.Contains(t->dtype())) {
    return ctx.Error("input ", i, " has element type ", DataTypeName(t->dtype()), "; this version allows ",
                     allowed.ToString());
  }
  return t;
}

Status RequireSameType(const KernelContext& ctx, size_t i, const Tensor& a, size_t j, const Tensor& b) {
  if (a.dtype() == b.dtype()) return Status::Ok();
  return ctx.Error("inputs ", i, " and ", j, " must have the same element type, got ", DataTypeName(a.dtype()),
                   " and ", DataTypeName(b.dtype()));
}

StatusOr<Tensor> LegacyBroadcastOperand(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (ctx.GetInt("broadcast", 0) == 0) {
    if (a.shape() != b.shape()) {
      return ctx.Error("without broadcast=1 the inputs must have the same shape, got ", ShapeToString(a.shape()),
                       " and ", ShapeToString(b.shape()));
    }
    return b;
  }
  if (b.size() == 1) return b.Reshaped({});
  const int64_t rank_a = a.rank();
  const int64_t rank_b = b.rank();
  if (rank_b > rank_a) {
    return ctx.Error("with broadcast=1, B ", ShapeToString(b.shape()), " cannot have a higher rank than A ",
                     ShapeToString(a.shape()));
  }
  int64_t start = rank_a - rank_b;  // suffix matching
  if (ctx.has_attribute("axis")) {
    PARITY_ASSIGN_OR_RETURN(start, NormalizeAxis(ctx, ctx.GetInt("axis", 0), rank_a));
    if (start + rank_b > rank_a) {
      return ctx.Error("with axis=", ctx.GetInt("axis", 0), ", B ", ShapeToString(b.shape()),
                       " runs past the end of A ", ShapeToString(a.shape()));
    }
  }
  for (int64_t k = 0; k < rank_b; ++k) {
    if (b.dim(k) != a.dim(start + k)) {
      return ctx.Error("with broadcast=1, B ", ShapeToString(b.shape()), " must match A ",
                       ShapeToString(a.shape()), " from dimension ", start);
    }
  }
  Shape shape = b.shape();
  shape.resize(static_cast<size_t>(rank_a - start), 1);  // trailing 1s broadcast A's later dimensions
  return b.Reshaped(std::move(shape));
}

StatusOr<BinaryOperands> ReadBinaryOperands(const KernelContext& ctx, const OpVersion& version, bool same_type) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, TypedInput(ctx, 0, version.types));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
  if (same_type) PARITY_RETURN_IF_ERROR(RequireSameType(ctx, 0, *a, 1, *b));
  if (version.since_version < 7) {
    PARITY_ASSIGN_OR_RETURN(Tensor shaped, LegacyBroadcastOperand(ctx, *a, *b));
    return BinaryOperands{a, std::move(shaped)};
  }
  return BinaryOperands{a, *b};
}

Status NoArithmeticFor(const KernelContext& ctx, DataType dtype) {
  return Internal(ctx.NodeLabel(), ": the kernel has no arithmetic for element type ", DataTypeName(dtype));
}

StatusOr<BroadcastPlan> PlanBroadcast(const KernelContext& ctx, std::span<const Tensor* const> inputs) {
  std::vector<Shape> shapes;
  shapes.reserve(inputs.size());
  for (const Tensor* t : inputs) shapes.push_back(t->shape());
  BroadcastPlan plan;
  PARITY_ASSIGN_OR_RETURN(plan.shape, BroadcastShapes(ctx, shapes));
  PARITY_ASSIGN_OR_RETURN(plan.size, ElementCount(plan.shape));
  plan.indexers.reserve(inputs.size());
  for (const Tensor* t : inputs) plan.indexers.emplace_back(t->shape(), plan.shape);
  return plan;
}

}  // namespace parity::ops
