// Kernels that permute data: Transpose, and DepthToSpace / SpaceToDepth,
// which the spec defines as reshape -> transpose -> reshape.
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

// Output axis i takes input axis perm[i] (perm already validated).
StatusOr<Tensor> Permute(const KernelContext& ctx, const Tensor& input, const std::vector<int64_t>& perm) {
  const int64_t rank = input.rank();
  Shape out_shape(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) out_shape[static_cast<size_t>(i)] = input.dim(perm[static_cast<size_t>(i)]);
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, input.dtype(), out_shape));
  if (out.size() == 0) return out;
  const std::vector<int64_t> in_strides = Strides(input.shape());
  std::vector<int64_t> stride_of_out_axis(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) {
    stride_of_out_axis[static_cast<size_t>(i)] = in_strides[static_cast<size_t>(perm[static_cast<size_t>(i)])];
  }
  ElementCopier copy(input, out);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t src = 0;
  for (int64_t dst = 0; dst < out.size(); ++dst) {
    copy(src, dst);
    // Advance the output multi-index and keep the input offset in step.
    for (int64_t a = rank - 1; a >= 0; --a) {
      const size_t ua = static_cast<size_t>(a);
      src += stride_of_out_axis[ua];
      if (++index[ua] < out_shape[ua]) break;
      src -= stride_of_out_axis[ua] * out_shape[ua];
      index[ua] = 0;
    }
  }
  return out;
}

// DepthToSpace and SpaceToDepth: validate a 4-D input and the blocksize.
StatusOr<int64_t> BlockSize(const KernelContext& ctx, const Tensor& input) {
  if (input.rank() != 4) return ctx.Error("input must be 4-D (N, C, H, W), got ", input.Description());
  if (!ctx.has_attribute("blocksize")) return ctx.Error("attribute 'blocksize' is required");
  const int64_t b = ctx.GetInt("blocksize", 0);
  if (b <= 0 || b > (int64_t{1} << 31)) return ctx.Error("blocksize ", b, " must be positive");
  return b;
}

StatusOr<bool> IsCrdMode(const KernelContext& ctx) {
  const std::string mode = ctx.GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ctx.Error("mode '", mode, "' must be DCR or CRD");
  return mode == "CRD";
}

}  // namespace

KernelResult TransposeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  const int64_t rank = input->rank();
  std::vector<int64_t> perm;
  if (ctx.has_attribute("perm")) {
    perm = ctx.GetInts("perm");
    if (static_cast<int64_t>(perm.size()) != rank) {
      return ctx.Error("perm has ", perm.size(), " entries for a rank-", rank, " input");
    }
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) {
        return ctx.Error("perm ", ShapeToString(perm), " is not a permutation of 0..", rank - 1);
      }
      seen[static_cast<size_t>(p)] = true;
    }
  } else {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);  // the default reverses the axes
  }
  return Single(Permute(ctx, *input, perm));
}

KernelResult DepthToSpaceKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const int64_t b, BlockSize(ctx, *input));
  PARITY_ASSIGN_OR_RETURN(const bool crd, IsCrdMode(ctx));
  const int64_t n = input->dim(0), c = input->dim(1), h = input->dim(2), w = input->dim(3);
  if (c % (b * b) != 0) return ctx.Error("channels ", c, " are not a multiple of blocksize^2 = ", b * b);
  const int64_t depth = c / (b * b);
  // DCR: channels split as (b, b, depth); CRD: as (depth, b, b).
  const Tensor split = crd ? input->Reshaped({n, depth, b, b, h, w}) : input->Reshaped({n, b, b, depth, h, w});
  const std::vector<int64_t> perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
  PARITY_ASSIGN_OR_RETURN(Tensor moved, Permute(ctx, split, perm));
  return Single(moved.Reshaped({n, depth, h * b, w * b}));
}

KernelResult SpaceToDepthKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const int64_t b, BlockSize(ctx, *input));
  PARITY_ASSIGN_OR_RETURN(const bool crd, IsCrdMode(ctx));  // 'mode' exists from opset 28; DCR before
  const int64_t n = input->dim(0), c = input->dim(1), h = input->dim(2), w = input->dim(3);
  if (c > std::numeric_limits<int64_t>::max() / (b * b)) return ctx.Error("blocksize ", b, " is too large");
  if (h % b != 0 || w % b != 0) {
    return ctx.Error("height ", h, " and width ", w, " must be multiples of blocksize ", b);
  }
  const Tensor split = input->Reshaped({n, c, h / b, b, w / b, b});
  const std::vector<int64_t> perm = crd ? std::vector<int64_t>{0, 1, 3, 5, 2, 4} : std::vector<int64_t>{0, 3, 5, 1, 2, 4};
  PARITY_ASSIGN_OR_RETURN(Tensor moved, Permute(ctx, split, perm));
  return Single(moved.Reshaped({n, c * b * b, h / b, w / b}));
}

}  // namespace parity::ops::tensor
