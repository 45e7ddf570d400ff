// Conv as im2col + GEMM and ConvTranspose as GEMM + col2im, in tasks over
// fixed blocks (conv_gemm.h).
#include "reference/ops/nn/conv_gemm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "reference/core/parallel.h"
#include "reference/ops/gemm.h"
#include "reference/ops/nn/im2col.h"

namespace parity::ops::nn {

namespace {

// One block's columns: 2^18 doubles, 2 MiB, stay in a core's L2 cache
// between im2col writing them and the GEMM packing them.
constexpr int64_t kBlockValues = int64_t{1} << 18;
// Fewer positions make the GEMM too thin (the weights are packed again for
// every block); more only make the columns larger.
constexpr int64_t kMinBlock = 128;
constexpr int64_t kMaxBlock = 4096;
// GEMM rows (output channels x kernel offsets) per ConvTranspose task.
constexpr int64_t kTaskRows = 256;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// `total` split into pieces of at most `cap`, as evenly as whole pieces allow.
int64_t EvenPiece(int64_t total, int64_t cap) { return CeilDiv(total, CeilDiv(total, cap)); }

}  // namespace

int64_t BlockPositions(int64_t positions, int64_t rows) {
  if (positions <= 0) return 1;
  const int64_t cap = std::clamp(kBlockValues / std::max<int64_t>(rows, 1), kMinBlock, kMaxBlock);
  return EvenPiece(positions, cap);
}

int64_t ChannelsPerTask(int64_t out_per_group, int64_t kernel_size) {
  if (out_per_group <= 0) return 1;
  const int64_t cap = std::clamp(CeilDiv(kTaskRows, std::max<int64_t>(kernel_size, 1)), int64_t{1}, out_per_group);
  return EvenPiece(out_per_group, cap);
}

void ConvByGemm(const double* x, const Shape& x_shape, const double* w, int64_t out_channels, int64_t group,
                const Window& win, const double* bias, Tensor* y, bool finite, bool float32_steps) {
  const int64_t batch = x_shape[0];
  const int64_t channels = x_shape[1];
  const int64_t in_per_group = channels / group;
  const int64_t out_per_group = out_channels / group;
  const WindowMap map = WindowMap::ForConv(win);
  const int64_t rows = in_per_group * map.kernel_size();  // one column: a window over a group's channels
  const int64_t positions = map.grid_size();
  const int64_t in_size = map.target_size();
  if (batch == 0 || out_channels == 0 || positions == 0) return;
  // A 1x1 window with unit strides and no padding reads each position of X
  // where it lies: the columns are X's own rows, taken in place.
  const bool pointwise = map.grid == map.target && map.kernel_size() == 1 &&
                         std::all_of(map.strides.begin(), map.strides.end(), [](int64_t s) { return s == 1; }) &&
                         std::all_of(map.pad_begin.begin(), map.pad_begin.end(), [](int64_t p) { return p == 0; });
  const int64_t block = BlockPositions(positions, rows);
  const int64_t blocks = CeilDiv(positions, block);
  ParallelFor(batch * group * blocks, [&](int64_t task) {
    const int64_t begin = (task % blocks) * block;
    const int64_t g = (task / blocks) % group;
    const int64_t n = task / blocks / group;
    const int64_t count = std::min(block, positions - begin);
    const double* x_g = x + (n * channels + g * in_per_group) * in_size;
    std::unique_ptr<double[]> cols;
    MatrixView columns{x_g + begin, in_size, false, finite};
    if (!pointwise) {
      cols = std::make_unique_for_overwrite<double[]>(static_cast<size_t>(rows * count));
      Im2Col(map, BlockSegments(map, begin, begin + count), x_g, in_per_group, count, cols.get());
      columns = MatrixView{cols.get(), count, false, finite};
    }
    auto out = std::make_unique_for_overwrite<double[]>(static_cast<size_t>(out_per_group * count));
    const MatrixView weights{w + g * out_per_group * rows, rows, false, finite};
    if (float32_steps) {
      GemmInOrder(out_per_group, count, rows, weights, columns, out.get(), count, true);
    } else {
      GemmDoubleSerial(out_per_group, count, rows, weights, columns, out.get(), count);
    }
    for (int64_t m = 0; m < out_per_group; ++m) {
      const int64_t channel = g * out_per_group + m;
      double* row = out.get() + m * count;
      if (bias != nullptr && float32_steps) {
        for (int64_t j = 0; j < count; ++j) {
          row[j] = static_cast<float>(static_cast<float>(row[j]) + static_cast<float>(bias[channel]));
        }
      } else if (bias != nullptr) {
        for (int64_t j = 0; j < count; ++j) row[j] += bias[channel];
      }
      y->WriteDoubles((n * out_channels + channel) * positions + begin, count, row);
    }
  });
}

void ConvTransposeByGemm(const double* x, const Shape& x_shape, const double* w, int64_t out_per_group,
                         int64_t group, const Window& win, const double* bias, Tensor* y, bool finite) {
  const int64_t batch = x_shape[0];
  const int64_t channels = x_shape[1];
  const int64_t in_per_group = channels / group;
  const int64_t out_channels = out_per_group * group;
  const WindowMap map = WindowMap::ForConvTranspose(win);
  const int64_t kernel_size = map.kernel_size();
  const int64_t in_size = map.grid_size();
  const int64_t out_size = map.target_size();
  if (batch == 0 || out_channels == 0 || out_size == 0) return;
  const int64_t per_task = ChannelsPerTask(out_per_group, kernel_size);
  const int64_t channel_blocks = CeilDiv(out_per_group, per_task);
  const int64_t block = BlockPositions(in_size, per_task * kernel_size);
  ParallelFor(batch * group * channel_blocks, [&](int64_t task) {
    const int64_t m0 = (task % channel_blocks) * per_task;
    const int64_t g = (task / channel_blocks) % group;
    const int64_t n = task / channel_blocks / group;
    const int64_t count_m = std::min(per_task, out_per_group - m0);
    const int64_t rows = count_m * kernel_size;
    // The task's output channels, summed in double: block after block, and
    // within a block in col2im's order.
    std::vector<double> acc(static_cast<size_t>(count_m * out_size), 0.0);
    auto cols = std::make_unique_for_overwrite<double[]>(static_cast<size_t>(rows * std::min(block, in_size)));
    // Row (m, kk) of W_g^T is column m * kernel_size + kk of W_g [C/group, M/group * kernel_size].
    const MatrixView w_t{w + (g * in_per_group * out_per_group + m0) * kernel_size, out_per_group * kernel_size, true,
                         finite};
    for (int64_t begin = 0; begin < in_size; begin += block) {
      const int64_t count = std::min(block, in_size - begin);
      const MatrixView x_g{x + (n * channels + g * in_per_group) * in_size + begin, in_size, false, finite};
      GemmDoubleSerial(rows, count, in_per_group, w_t, x_g, cols.get(), count);
      Col2Im(map, BlockSegments(map, begin, begin + count), cols.get(), count_m, count, acc.data());
    }
    const int64_t first = g * out_per_group + m0;
    if (bias != nullptr) {
      for (int64_t m = 0; m < count_m; ++m) {
        double* plane = acc.data() + m * out_size;
        for (int64_t i = 0; i < out_size; ++i) plane[i] += bias[first + m];
      }
    }
    y->WriteDoubles((n * out_channels + first) * out_size, count_m * out_size, acc.data());
  });
}


}  // namespace parity::ops::nn
