// The direct N-D grouped convolution behind ConvInteger and QLinearConv
// (exact with int64 accumulation), and the direct loops of Conv and
// ConvTranspose in double: the path for a weight holding an infinity or a
// NaN, and the yardstick of the GEMM forms' tests (conv_gemm.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

// y[n, m, o...] = sum over c in m's group and kernel offsets k of
//   x[n, g * C/group + c, o * stride - pad_begin + k * dilation] * w[m, c, k...]
// where positions outside the input read as zero. x has shape
// [N, C, win.input...], w [M, C/group, win.kernel...]; the result has shape
// [N, M, win.output...]. T is double or int64_t (int64 wraps, never UB: the
// caller's values are 8/32-bit so sums stay far from the int64 range).
template <typename T>
std::vector<T> Convolve(const std::vector<T>& x, const Shape& x_shape, const std::vector<T>& w, int64_t out_channels,
                        int64_t group, const Window& win) {
  const int64_t batch = x_shape[0];
  const int64_t channels = x_shape[1];
  const int64_t in_per_group = channels / group;
  const int64_t out_per_group = out_channels / group;
  const size_t rank = win.rank();
  const int64_t in_size = Product(win.input);
  const int64_t out_size = Product(win.output);
  const int64_t kernel_size = Product(win.kernel);
  const std::vector<int64_t> in_strides = [&] {
    std::vector<int64_t> s(rank, 1);
    for (size_t i = rank; i-- > 1;) s[i - 1] = s[i] * win.input[i];
    return s;
  }();
  // Kernel offsets, as an index list per axis, enumerated once.
  std::vector<std::vector<int64_t>> kernel_offsets;
  kernel_offsets.reserve(static_cast<size_t>(kernel_size));
  {
    std::vector<int64_t> k(rank, 0);
    do {
      kernel_offsets.push_back(k);
    } while (NextIndex(k, win.kernel));
  }
  std::vector<T> y(static_cast<size_t>(batch * out_channels * out_size), T{});
  std::vector<int64_t> o(rank, 0);
  std::vector<int64_t> origin(rank, 0);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t g = m / out_per_group;
      T* out = y.data() + (n * out_channels + m) * out_size;
      std::fill(o.begin(), o.end(), 0);
      for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, win.output)) {
        for (size_t a = 0; a < rank; ++a) origin[a] = o[a] * win.strides[a] - win.pad_begin[a];
        T acc{};
        for (int64_t kk = 0; kk < kernel_size; ++kk) {
          const std::vector<int64_t>& k = kernel_offsets[static_cast<size_t>(kk)];
          int64_t offset = 0;
          bool inside = true;
          for (size_t a = 0; a < rank; ++a) {
            const int64_t pos = origin[a] + k[a] * win.dilations[a];
            if (pos < 0 || pos >= win.input[a]) {
              inside = false;
              break;
            }
            offset += pos * in_strides[a];
          }
          if (!inside) continue;
          for (int64_t c = 0; c < in_per_group; ++c) {
            const T xv = x[static_cast<size_t>((n * channels + g * in_per_group + c) * in_size + offset)];
            const T wv = w[static_cast<size_t>((m * in_per_group + c) * kernel_size + kk)];
            acc += xv * wv;
          }
        }
        out[oi] = acc;
      }
    }
  }
  return y;
}

// ConvTranspose by its definition: every input element scatters x * w over
// its dilated kernel footprint, y[n, g * M/group + m, i * stride - pad_begin
// + k * dilation] += x[n, c, i...] * w[c, m, k...] for c in group g, summed
// in the order (c, i, k, m) and skipping footprints outside the output. x
// has shape [N, C, win.input...], w [C, out_per_group, win.kernel...]; the
// result [N, out_per_group * group, win.output...].
inline std::vector<double> ConvolveTransposed(const std::vector<double>& x, const Shape& x_shape,
                                              const std::vector<double>& w, int64_t out_per_group, int64_t group,
                                              const Window& win) {
  const int64_t batch = x_shape[0];
  const int64_t channels = x_shape[1];
  const int64_t in_per_group = channels / group;
  const int64_t out_channels = out_per_group * group;
  const size_t rank = win.rank();
  const int64_t in_size = Product(win.input);
  const int64_t out_size = Product(win.output);
  const int64_t kernel_size = Product(win.kernel);
  std::vector<int64_t> out_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) out_strides[i - 1] = out_strides[i] * win.output[i];
  std::vector<double> y(static_cast<size_t>(batch * out_channels * out_size), 0.0);
  std::vector<int64_t> i_idx(rank, 0), k_idx(rank, 0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t g = c / in_per_group;
      std::fill(i_idx.begin(), i_idx.end(), 0);
      for (int64_t ii = 0; ii < in_size; ++ii, NextIndex(i_idx, win.input)) {
        const double value = x[static_cast<size_t>((b * channels + c) * in_size + ii)];
        std::fill(k_idx.begin(), k_idx.end(), 0);
        for (int64_t kk = 0; kk < kernel_size; ++kk, NextIndex(k_idx, win.kernel)) {
          int64_t offset = 0;
          bool inside = true;
          for (size_t a = 0; a < rank; ++a) {
            const int64_t pos = i_idx[a] * win.strides[a] - win.pad_begin[a] + k_idx[a] * win.dilations[a];
            if (pos < 0 || pos >= win.output[a]) {
              inside = false;
              break;
            }
            offset += pos * out_strides[a];
          }
          if (!inside) continue;
          for (int64_t m = 0; m < out_per_group; ++m) {
            const int64_t oc = g * out_per_group + m;
            y[static_cast<size_t>((b * out_channels + oc) * out_size + offset)] +=
                value * w[static_cast<size_t>((c * out_per_group + m) * kernel_size + kk)];
          }
        }
      }
    }
  }
  return y;
}

// y[n, m, ...] += bias[m] for y of shape [N, channels, plane elements]:
// the bias of the direct loops' results (Conv, ConvTranspose); no bias, no change.
inline void AddChannelBias(std::vector<double>& y, const std::vector<double>& bias, int64_t channels, int64_t plane) {
  if (bias.empty()) return;
  plane = std::max<int64_t>(plane, 1);
  for (size_t i = 0; i < y.size(); ++i) y[i] += bias[static_cast<size_t>((static_cast<int64_t>(i) / plane) % channels)];
}

}  // namespace parity::ops::nn
