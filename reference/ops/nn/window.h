// Sliding-window geometry shared by the convolution and pooling kernels of
// the nn family: reading kernel_shape, strides, dilations, pads and auto_pad,
// computing the output's spatial shape, and walking N-D index spaces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"

namespace parity::ops::nn {

// The geometry of a window slid over the spatial dimensions of an input.
// Output position o along axis i reads input positions
//   o * strides[i] - pad_begin[i] + j * dilations[i],  0 <= j < kernel[i].
struct Window {
  std::vector<int64_t> input;      // spatial input dimensions
  std::vector<int64_t> kernel;     // kernel_shape
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;  // pads[0 .. n)
  std::vector<int64_t> pad_end;    // pads[n .. 2n)
  std::vector<int64_t> output;     // spatial output dimensions

  size_t rank() const { return input.size(); }
  // (kernel - 1) * dilation + 1 along `axis`.
  int64_t Extent(size_t axis) const { return (kernel[axis] - 1) * dilations[axis] + 1; }
};

// How the output extent is rounded when the window does not tile the input.
enum class WindowRounding {
  kConv,  // floor; SAME pads split with the extra on the end (upper) or begin (lower)
  kPool,  // floor, or ceil with ceil_mode (a last window must start inside input or begin pad)
};

// Reads strides, dilations, pads and auto_pad from the node and computes the
// output shape for `input` spatial dims and `kernel`. `ceil_mode` applies to
// pooling only. Errors name the attribute and the bad value.
StatusOr<Window> ResolveWindow(const KernelContext& ctx, const std::vector<int64_t>& input,
                               const std::vector<int64_t>& kernel, bool ceil_mode = false);

// The kernel_shape attribute if present (checked against `weight_spatial` when
// that is not empty), else `weight_spatial`.
StatusOr<std::vector<int64_t>> KernelShape(const KernelContext& ctx, const std::vector<int64_t>& weight_spatial);

// Product of the dimensions (caller has checked them to be non-negative).
int64_t Product(const std::vector<int64_t>& dims);

// Increments an N-D index in row-major order; false after the last one.
bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims);

// Floor division for a positive divisor (Python's //).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Checks a tensor has rank >= 3 (N, C, spatial...) and returns a message if not.
Status RequireImage(const KernelContext& ctx, const Tensor& x, const char* name);

}  // namespace parity::ops::nn
