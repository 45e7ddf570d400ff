// Col2Im (18): the inverse of im2col — sums the columns of sliding blocks
// back into an image. input [N, C * prod(block_shape), L] becomes
// [N, C, image_shape...]; column l is block position l of the grid of blocks
// (row-major), row c * prod(block) + j is kernel offset j of channel c.
#include <complex>

#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

KernelResult Col2Im(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* image_tensor, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* block_tensor, ctx.RequireTensor(2));
  if (input->rank() != 3) return ctx.Error("input must be 3-D [N, C * prod(block_shape), L], got ", input->Description());
  const DataType t = input->dtype();
  if (t == DataType::kString) return ctx.Error("Col2Im cannot sum strings");
  const std::vector<int64_t> image = image_tensor->ToInt64s();
  const std::vector<int64_t> block = block_tensor->ToInt64s();
  const size_t n = image.size();
  if (n == 0 || block.size() != n) {
    return ctx.Error("image_shape ", ShapeToString(image), " and block_shape ", ShapeToString(block),
                     " must have the same, non-zero length");
  }
  for (size_t i = 0; i < n; ++i) {
    if (image[i] <= 0 || block[i] <= 0) return ctx.Error("image_shape and block_shape must be positive");
  }
  const auto read = [&](const char* name, int64_t fallback, size_t count) -> StatusOr<std::vector<int64_t>> {
    if (!ctx.has_attribute(name)) return std::vector<int64_t>(count, fallback);
    std::vector<int64_t> v = ctx.GetInts(name);
    if (v.size() != count) return ctx.Error("attribute ", name, " has ", v.size(), " values, expected ", count);
    return v;
  };
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> strides, read("strides", 1, n));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, read("dilations", 1, n));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> pads, read("pads", 0, 2 * n));
  std::vector<int64_t> grid(n);
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0 || pads[i] < 0 || pads[n + i] < 0) {
      return ctx.Error("strides and dilations must be positive, pads non-negative");
    }
    const int64_t span = image[i] + pads[i] + pads[n + i] - (dilations[i] * (block[i] - 1) + 1);
    if (span < 0) return ctx.Error("block does not fit the padded image on axis ", i);
    grid[i] = span / strides[i] + 1;
  }
  const int64_t block_size = Product(block);
  const int64_t blocks = Product(grid);
  if (input->dim(1) % block_size != 0) {
    return ctx.Error("input dimension 1 (", input->dim(1), ") is not a multiple of prod(block_shape) = ", block_size);
  }
  if (input->dim(2) != blocks) {
    return ctx.Error("input dimension 2 (", input->dim(2), ") differs from the number of blocks ", blocks);
  }
  const int64_t batch = input->dim(0);
  const int64_t channels = input->dim(1) / block_size;
  const int64_t image_size = Product(image);
  std::vector<int64_t> image_strides(n, 1);
  for (size_t i = n; i-- > 1;) image_strides[i - 1] = image_strides[i] * image[i];
  Shape out_shape = {batch, channels};
  out_shape.insert(out_shape.end(), image.begin(), image.end());
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, t, out_shape));

  // Sums in double for floats, complex<double>, or wrapping 64-bit integers.
  const bool is_float = IsFloatingPoint(t);
  const bool is_complex = IsComplex(t);
  std::vector<double> real_sum(is_float ? static_cast<size_t>(y.size()) : 0, 0.0);
  std::vector<int64_t> int_sum(!is_float && !is_complex ? static_cast<size_t>(y.size()) : 0, 0);
  std::vector<std::complex<double>> complex_sum(is_complex ? static_cast<size_t>(y.size()) : 0);
  std::vector<int64_t> k(n, 0), b(n, 0);
  for (int64_t nn = 0; nn < batch; ++nn) {
    for (int64_t c = 0; c < channels; ++c) {
      std::fill(k.begin(), k.end(), 0);
      for (int64_t kk = 0; kk < block_size; ++kk, NextIndex(k, block)) {
        std::fill(b.begin(), b.end(), 0);
        for (int64_t l = 0; l < blocks; ++l, NextIndex(b, grid)) {
          int64_t offset = 0;
          bool inside = true;
          for (size_t a = 0; a < n && inside; ++a) {
            const int64_t pos = b[a] * strides[a] - pads[a] + k[a] * dilations[a];
            inside = pos >= 0 && pos < image[a];
            offset += pos * image_strides[a];
          }
          if (!inside) continue;
          const int64_t from = ((nn * channels + c) * block_size + kk) * blocks + l;
          const size_t to = static_cast<size_t>((nn * channels + c) * image_size + offset);
          if (is_float) {
            real_sum[to] += input->GetDouble(from);
          } else if (is_complex) {
            complex_sum[to] += input->GetComplex(from);
          } else {
            // Unsigned wrap-around keeps the integer sum free of signed overflow.
            int_sum[to] = static_cast<int64_t>(static_cast<uint64_t>(int_sum[to]) + static_cast<uint64_t>(input->GetInt64(from)));
          }
        }
      }
    }
  }
  for (int64_t i = 0; i < y.size(); ++i) {
    const size_t u = static_cast<size_t>(i);
    if (is_float) {
      y.SetDouble(i, real_sum[u]);
    } else if (is_complex) {
      y.SetComplex(i, complex_sum[u]);
    } else if (t == DataType::kBool) {
      y.SetInt64(i, int_sum[u] != 0 ? 1 : 0);
    } else {
      y.SetInt64(i, int_sum[u]);
    }
  }
  return Single(std::move(y));
}

}  // namespace parity::ops::nn
