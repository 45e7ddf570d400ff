// Tests of the window runs, im2col and col2im (im2col.cc), against a
// position-by-position walk of the same geometry.
#include "reference/ops/nn/im2col.h"

#include <random>

#include <gtest/gtest.h>

namespace parity::ops::nn {
namespace {

// Flat target position of grid position p (flat) and kernel offset kk, or -1 outside.
int64_t TargetOf(const WindowMap& map, int64_t p, int64_t kk) {
  int64_t flat = 0;
  for (size_t a = 0; a < map.rank(); ++a) {
    int64_t grid_stride = 1, kernel_stride = 1;
    for (size_t b = a + 1; b < map.rank(); ++b) {
      grid_stride *= map.grid[b];
      kernel_stride *= map.kernel[b];
    }
    const int64_t g = p / grid_stride % map.grid[a];
    const int64_t k = kk / kernel_stride % map.kernel[a];
    const int64_t t = g * map.strides[a] - map.pad_begin[a] + k * map.dilations[a];
    if (t < 0 || t >= map.target[a]) return -1;
    flat = flat * map.target[a] + t;
  }
  return flat;
}

TEST(Im2Col, OneDimensionalStridedDilatedPadded) {
  // Input [1 2 3 4 5], kernel 2, stride 2, dilation 2, pad_begin 1: output
  // position o reads inputs 2o - 1 and 2o + 1.
  const WindowMap map{{3}, {5}, {2}, {2}, {2}, {1}};
  const std::vector<double> x{1, 2, 3, 4, 5};
  std::vector<double> cols(6, -1.0);
  Im2Col(map, BlockSegments(map, 0, 3), x.data(), 1, 3, cols.data());
  EXPECT_EQ(cols, (std::vector<double>{0, 2, 4, 2, 4, 0}));
  std::vector<double> tail(4, -1.0);
  Im2Col(map, BlockSegments(map, 1, 3), x.data(), 1, 2, tail.data());
  EXPECT_EQ(tail, (std::vector<double>{2, 4, 4, 0}));
}

TEST(Im2Col, AgreesWithAPositionWalkOnRandomGeometry) {
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 200; ++trial) {
    const size_t rank = static_cast<size_t>(pick(1, 3));
    WindowMap map;
    for (size_t a = 0; a < rank; ++a) {
      map.grid.push_back(pick(1, 7));
      map.target.push_back(pick(0, 9));
      map.kernel.push_back(pick(1, 3));
      map.strides.push_back(pick(1, 3));
      map.dilations.push_back(pick(1, 2));
      map.pad_begin.push_back(pick(-3, 3));  // negative: ConvTranspose's output_shape
    }
    const int64_t channels = pick(1, 2);
    const int64_t kernel_size = map.kernel_size(), target_size = map.target_size();
    const int64_t begin = pick(0, map.grid_size() - 1);
    const int64_t end = pick(begin + 1, map.grid_size());
    const int64_t count = end - begin;
    std::vector<double> source(static_cast<size_t>(channels * target_size));
    for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<double>(i + 1);
    const auto segments = BlockSegments(map, begin, end);

    std::vector<double> cols(static_cast<size_t>(channels * kernel_size * count), -1.0);
    Im2Col(map, segments, source.data(), channels, count, cols.data());
    // Col2Im of columns 1, 2, 3, ... adds each column value to its target once.
    std::vector<double> values(cols.size());
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i + 1);
    std::vector<double> scattered(source.size(), 0.0), want_scattered(source.size(), 0.0);
    Col2Im(map, segments, values.data(), channels, count, scattered.data());
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t kk = 0; kk < kernel_size; ++kk) {
        for (int64_t j = 0; j < count; ++j) {
          const int64_t t = TargetOf(map, begin + j, kk);
          const size_t row = static_cast<size_t>((c * kernel_size + kk) * count + j);
          const double want = t < 0 ? 0.0 : source[static_cast<size_t>(c * target_size + t)];
          ASSERT_EQ(cols[row], want) << "trial " << trial << " c " << c << " kk " << kk << " j " << j;
          if (t >= 0) want_scattered[static_cast<size_t>(c * target_size + t)] += values[row];
        }
      }
    }
    ASSERT_EQ(scattered, want_scattered) << "trial " << trial;
  }
}

TEST(Im2Col, EmptyBlockHasNoSegments) {
  const WindowMap map{{4}, {4}, {3}, {1}, {1}, {1}};
  const auto segments = BlockSegments(map, 2, 2);
  ASSERT_EQ(segments.size(), 3u);
  for (const auto& list : segments) EXPECT_TRUE(list.empty());
}

}  // namespace
}  // namespace parity::ops::nn
