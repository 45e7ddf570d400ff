// The window geometry of Conv and ConvTranspose laid out for matrix
// products: im2col gathers, for a block of positions, every window element
// into one column per position; col2im scatters such columns back.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

// Grid position p and kernel offset k meet target position
//   p * strides - pad_begin + k * dilations  (per axis).
// For Conv the grid is the output and the target the input it reads; for
// ConvTranspose the grid is the input and the target the output it writes.
struct WindowMap {
  std::vector<int64_t> grid;
  std::vector<int64_t> target;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;

  static WindowMap ForConv(const Window& win);
  static WindowMap ForConvTranspose(const Window& win);

  size_t rank() const { return grid.size(); }
  int64_t grid_size() const { return Product(grid); }
  int64_t target_size() const { return Product(target); }
  int64_t kernel_size() const { return Product(kernel); }
};

// A run of block positions [at, at + count) whose window element lies
// inside the target, at flat target positions target, target + step, ...
// where step is the stride of the last axis.
struct WindowSegment {
  int64_t at = 0;
  int64_t count = 0;
  int64_t target = 0;
};

// For the grid positions [begin, end) (row-major), the segments of every
// kernel offset: result[kk] in increasing `at`, kernel offsets row-major.
// Positions of the block that no segment covers fall outside the target.
std::vector<std::vector<WindowSegment>> BlockSegments(const WindowMap& map, int64_t begin, int64_t end);

// im2col: for channels [0, channels) of `source` (each target_size long),
// cols[(c * kernel_size + kk) * count + j] = source[c][target of block
// position j and offset kk], and 0 where that lies outside the target.
// `count` is the block's length (end - begin of BlockSegments).
void Im2Col(const WindowMap& map, const std::vector<std::vector<WindowSegment>>& segments, const double* source,
            int64_t channels, int64_t count, double* cols);

// col2im: the reverse scatter, dest[c][target of (j, kk)] += cols[(c *
// kernel_size + kk) * count + j] for the elements inside the target, in the
// order c, kk, j (so a fixed summation order into each destination element).
void Col2Im(const WindowMap& map, const std::vector<std::vector<WindowSegment>>& segments, const double* cols,
            int64_t channels, int64_t count, double* dest);

}  // namespace parity::ops::nn
