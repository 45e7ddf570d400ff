// Element copying, integer-list reading and axis normalisation for the
// tensor family.
#include "reference/ops/tensor/tensor_util.h"

#include "reference/ops/common.h"

namespace parity::ops::tensor {

ElementCopier::ElementCopier(const Tensor& src, Tensor& dst) {
  if (src.dtype() == DataType::kString) {
    src_strings_ = &src.strings();
    dst_strings_ = &dst.mutable_strings();
  } else {
    src_ = src.raw_bytes();
    dst_ = dst.mutable_raw_bytes();
    width_ = static_cast<int64_t>(StorageSize(src.dtype()));
  }
}

void FillWith(Tensor& dst, const Tensor& value, int64_t index) {
  ElementCopier copy(value, dst);
  for (int64_t i = 0; i < dst.size(); ++i) copy(index, i);
}

StatusOr<std::vector<int64_t>> ReadIntegerInput(const KernelContext& ctx, size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return ctx.Error("input '", what, "' is required but absent");
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
  if (!IsInteger(t->dtype())) {
    return ctx.Error("input '", what, "' must be an integer tensor, got ", t->Description());
  }
  return t->ToInt64s();
}

StatusOr<std::vector<int64_t>> NormalizeAxes(const KernelContext& ctx, const std::vector<int64_t>& axes,
                                             int64_t rank, bool allow_duplicates) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    PARITY_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(ctx, axis, rank));
    if (!allow_duplicates && seen[static_cast<size_t>(a)]) return ctx.Error("axis ", axis, " is repeated");
    seen[static_cast<size_t>(a)] = true;
    out.push_back(a);
  }
  return out;
}

StatusOr<Tensor> CloneTensor(const KernelContext& ctx, const Tensor& src) {
  PARITY_ASSIGN_OR_RETURN(Tensor dst, Allocate(ctx, src.dtype(), src.shape()));
  if (src.dtype() == DataType::kString) {
    dst.mutable_strings() = src.strings();
  } else if (src.byte_size() > 0) {
    std::memcpy(dst.mutable_raw_bytes(), src.raw_bytes(), src.byte_size());
  }
  return dst;
}

}  // namespace parity::ops::tensor
