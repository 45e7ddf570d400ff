// im2col and col2im over blocks of grid positions, walked as runs along the
// last axis so that each (run, kernel offset) costs one bounds computation.
#include "reference/ops/nn/im2col.h"

#include <algorithm>

namespace parity::ops::nn {

namespace {

// Ceiling division of a dividend of either sign by a positive divisor.
int64_t SignedCeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

}  // namespace

WindowMap WindowMap::ForConv(const Window& win) {
  return WindowMap{win.output, win.input, win.kernel, win.strides, win.dilations, win.pad_begin};
}

WindowMap WindowMap::ForConvTranspose(const Window& win) {
  return WindowMap{win.input, win.output, win.kernel, win.strides, win.dilations, win.pad_begin};
}

std::vector<std::vector<WindowSegment>> BlockSegments(const WindowMap& map, int64_t begin, int64_t end) {
  const size_t rank = map.rank();
  std::vector<std::vector<WindowSegment>> segments(static_cast<size_t>(map.kernel_size()));
  if (rank == 0 || begin >= end) return segments;
  const size_t last = rank - 1;
  std::vector<int64_t> target_strides(rank, 1);
  for (size_t a = rank; a-- > 1;) target_strides[a - 1] = target_strides[a] * map.target[a];
  const int64_t step = map.strides[last];
  std::vector<int64_t> k(rank, 0), p(rank, 0);
  for (auto& list : segments) {
    // Along the last axis the target is t * step + shift; it lies inside
    // [0, target) for grid coordinates t in [lo, hi).
    const int64_t shift = k[last] * map.dilations[last] - map.pad_begin[last];
    const int64_t lo = SignedCeilDiv(-shift, step);
    const int64_t hi = FloorDiv(map.target[last] - 1 - shift, step) + 1;
    int64_t rest = begin;
    for (size_t a = rank; a-- > 0;) {
      p[a] = rest % map.grid[a];
      rest /= map.grid[a];
    }
    for (int64_t pos = begin; pos < end;) {
      const int64_t run = std::min(map.grid[last] - p[last], end - pos);
      int64_t base = 0;
      bool inside = true;
      for (size_t a = 0; a < last && inside; ++a) {
        const int64_t t = p[a] * map.strides[a] - map.pad_begin[a] + k[a] * map.dilations[a];
        inside = t >= 0 && t < map.target[a];
        base += t * target_strides[a];
      }
      const int64_t t0 = std::max(p[last], lo);
      const int64_t t1 = std::min(p[last] + run, hi);
      if (inside && t0 < t1) list.push_back({pos - begin + (t0 - p[last]), t1 - t0, base + t0 * step + shift});
      pos += run;
      p[last] += run;
      if (p[last] == map.grid[last]) {
        p[last] = 0;
        for (size_t a = last; a-- > 0;) {
          if (++p[a] < map.grid[a]) break;
          p[a] = 0;
        }
      }
    }
    NextIndex(k, map.kernel);
  }
  return segments;
}

void Im2Col(const WindowMap& map, const std::vector<std::vector<WindowSegment>>& segments, const double* source,
            int64_t channels, int64_t count, double* cols) {
  const int64_t kernel_size = map.kernel_size();
  const int64_t target_size = map.target_size();
  const int64_t step = map.strides.empty() ? 1 : map.strides.back();
  for (int64_t c = 0; c < channels; ++c) {
    const double* channel = source + c * target_size;
    for (int64_t kk = 0; kk < kernel_size; ++kk) {
      double* row = cols + (c * kernel_size + kk) * count;
      int64_t filled = 0;
      for (const WindowSegment& s : segments[static_cast<size_t>(kk)]) {
        std::fill(row + filled, row + s.at, 0.0);
        const double* from = channel + s.target;
        double* to = row + s.at;
        if (step == 1) {
          std::copy(from, from + s.count, to);
        } else {
          for (int64_t j = 0; j < s.count; ++j) to[j] = from[j * step];
        }
        filled = s.at + s.count;
      }
      std::fill(row + filled, row + count, 0.0);
    }
  }
}

void Col2Im(const WindowMap& map, const std::vector<std::vector<WindowSegment>>& segments, const double* cols,
            int64_t channels, int64_t count, double* dest) {
  const int64_t kernel_size = map.kernel_size();
  const int64_t target_size = map.target_size();
  const int64_t step = map.strides.empty() ? 1 : map.strides.back();
  for (int64_t c = 0; c < channels; ++c) {
    double* channel = dest + c * target_size;
    for (int64_t kk = 0; kk < kernel_size; ++kk) {
      const double* row = cols + (c * kernel_size + kk) * count;
      for (const WindowSegment& s : segments[static_cast<size_t>(kk)]) {
        double* to = channel + s.target;
        const double* from = row + s.at;
        for (int64_t j = 0; j < s.count; ++j) to[j * step] += from[j];
      }
    }
  }
}

}  // namespace parity::ops::nn
