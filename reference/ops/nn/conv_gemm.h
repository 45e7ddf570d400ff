// Conv and ConvTranspose of floating-point data as double matrix products
// (GemmDoubleSerial, reference/ops/gemm.h) over blocks of positions, run as
// ParallelFor tasks (reference/core/parallel.h).
//
// Ground truth: every product and sum in double, the bias added in double
// after the sums, one rounding per element to the output's type. The tasks
// and blocks depend on the shapes alone and each task writes its own output
// elements in a fixed order, so results are bit-identical for every thread
// count. Against the direct loops of convolve.h only the order of the sums
// differs (and the GEMM may fuse a product into its sum).
#pragma once

#include <cstdint>
#include <memory>

#include "reference/core/tensor.h"
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

// How many grid positions one block holds, for `positions` positions in
// all and columns of `rows` values: about 2 MiB of columns (a core's L2),
// between 128 and 4096 positions, the blocks of one grid of equal length
// but the last. Depends on its arguments alone.
int64_t BlockPositions(int64_t positions, int64_t rows);

// How many output channels of one group a ConvTranspose task computes, for
// `out_per_group` channels and `kernel_size` kernel offsets: about 256
// GEMM rows, the channels of a group split evenly.
int64_t ChannelsPerTask(int64_t out_per_group, int64_t kernel_size);

// Conv: y[n, m, o...] = sum over c and k of x * w (convolve.h's Convolve),
// plus bias[m] when `bias` is not null, written into `y` (already of shape
// [N, M, win.output...] and of any floating type). x is [N, C,
// win.input...] and w [M, C/group, win.kernel...], both in double. Per
// (n, g, block of output positions): im2col, then W_g x cols.
// `finite`: the caller has checked that x and w hold no infinity or NaN
// (HoldsSpecialValue of gemm.h), so the products skip their own scans.
// `float32_steps`: the conventional arithmetic (KernelContext::float32_sums):
// each output's sum over the window in order, every partial sum and the
// bias's addition rounded to float32 (GemmInOrder), as a float32-accumulating
// kernel does; else in double (GemmDoubleSerial).
void ConvByGemm(const double* x, const Shape& x_shape, const double* w, int64_t out_channels, int64_t group,
                const Window& win, const double* bias, Tensor* y, bool finite, bool float32_steps = false);

// ConvTranspose (convolve.h's ConvolveTransposed) plus bias, written into
// `y` of shape [N, out_per_group * group, win.output...]. x is [N, C,
// win.input...], w [C, out_per_group, win.kernel...]. Per (n, g, block of
// output channels): W_g^T x X_g over blocks of input positions, each
// scattered into the output by col2im. `finite` as for ConvByGemm.
void ConvTransposeByGemm(const double* x, const Shape& x_shape, const double* w, int64_t out_per_group,
                         int64_t group, const Window& win, const double* bias, Tensor* y, bool finite);

}  // namespace parity::ops::nn
