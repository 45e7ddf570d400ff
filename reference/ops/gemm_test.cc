#include "reference/ops/gemm.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "reference/core/parallel.h"

namespace parity::ops {
namespace {

std::vector<double> Random(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) x = u(rng);
  return v;
}

// op(A) op(B) by the plain loop, long double, as the yardstick.
std::vector<double> Plain(int64_t m, int64_t n, int64_t k, const std::vector<double>& a, bool ta,
                          const std::vector<double>& b, bool tb) {
  std::vector<double> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      long double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = ta ? a[static_cast<size_t>(p * m + i)] : a[static_cast<size_t>(i * k + p)];
        const double y = tb ? b[static_cast<size_t>(j * k + p)] : b[static_cast<size_t>(p * n + j)];
        sum += static_cast<long double>(x) * y;
      }
      c[static_cast<size_t>(i * n + j)] = static_cast<double>(sum);
    }
  return c;
}

class GemmTest : public ::testing::Test {
 protected:
  void TearDown() override { SetThreadCount(0); }
};

TEST_F(GemmTest, AgreesWithThePlainProductForEveryTransposeAndOddSizes) {
  struct Size {
    int64_t m, n, k;
  };
  // The last two pass the split threshold, so they run as several tiles
  // with ragged edges.
  for (Size s : {Size{1, 1, 1}, Size{3, 5, 7}, Size{1, 300, 9}, Size{600, 530, 40}, Size{1030, 70, 90}}) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      const std::vector<double> a = Random(s.m * s.k, 1), b = Random(s.k * s.n, 2);
      std::vector<double> c(static_cast<size_t>(s.m * s.n), 99.0);
      GemmDouble(s.m, s.n, s.k, {a.data(), ta ? s.m : s.k, ta}, {b.data(), tb ? s.k : s.n, tb}, c.data(), s.n);
      const std::vector<double> want = Plain(s.m, s.n, s.k, a, ta, b, tb);
      for (size_t i = 0; i < c.size(); ++i) {
        // |error| <= k eps sum|a||b| <= k * 2^-52 * k for entries in [-1, 1].
        ASSERT_NEAR(c[i], want[i], static_cast<double>(s.k * s.k) * 0x1p-52)
            << s.m << "x" << s.n << "x" << s.k << " transposes " << t << " element " << i;
      }
    }
  }
}

TEST_F(GemmTest, BitIdenticalForEveryThreadCount) {
  const int64_t m = 700, n = 1100, k = 300;  // 2 x 3 tiles
  const std::vector<double> a = Random(m * k, 3), b = Random(k * n, 4);
  std::vector<std::vector<double>> results;
  for (int threads : {1, 2, 3}) {
    SetThreadCount(threads);
    std::vector<double> c(static_cast<size_t>(m * n));
    GemmDouble(m, n, k, {a.data(), k, false}, {b.data(), n, false}, c.data(), n);
    results.push_back(std::move(c));
  }
  std::vector<double> serial(static_cast<size_t>(m * n));
  GemmDoubleSerial(m, n, k, {a.data(), k, false}, {b.data(), n, false}, serial.data(), n);
  results.push_back(std::move(serial));
  for (size_t r = 1; r < results.size(); ++r) {
    EXPECT_EQ(0, std::memcmp(results[0].data(), results[r].data(), results[0].size() * sizeof(double)))
        << "run " << r << " differs from threads=1";
  }
}

TEST_F(GemmTest, SpecialValuesPropagateAsThePlainLoopSays) {
  const double inf = std::numeric_limits<double>::infinity();
  // A = [[inf, 1], [0, 2]] and B = [[0, 1], [1, 1]]: inf * 0 is NaN, inf * 1 is inf.
  const std::vector<double> a{inf, 1.0, 0.0, 2.0}, b{0.0, 1.0, 1.0, 1.0};
  std::vector<double> c(4);
  GemmDouble(2, 2, 2, {a.data(), 2, false}, {b.data(), 2, false}, c.data(), 2);
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ(c[1], inf);
  EXPECT_EQ(c[2], 2.0);
  EXPECT_EQ(c[3], 2.0);
}

// The conventional arithmetic's product against its definition, one element
// at a time: every partial sum rounded to float32 (or kept in double), k in
// order. Bit for bit, for every transpose and thread count.
TEST_F(GemmTest, InOrderProductIsTheOneElementLoopBitForBit) {
  const int64_t m = 37, n = 29, k = 300;
  std::vector<double> a = Random(m * k, 5), b = Random(k * n, 6);
  for (double& x : a) x = static_cast<float>(x);  // float32 data, as the kernels pass it
  for (double& x : b) x = static_cast<float>(x);
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    for (bool float32_steps : {true, false}) {
      std::vector<double> want(static_cast<size_t>(m * n));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0.0;
          for (int64_t p = 0; p < k; ++p) {
            const double x = ta ? a[static_cast<size_t>(p * m + i)] : a[static_cast<size_t>(i * k + p)];
            const double y = tb ? b[static_cast<size_t>(j * k + p)] : b[static_cast<size_t>(p * n + j)];
            sum = float32_steps ? static_cast<float>(sum + x * y) : sum + x * y;
          }
          want[static_cast<size_t>(i * n + j)] = sum;
        }
      for (int threads : {1, 2, 3}) {
        SetThreadCount(threads);
        std::vector<double> c(static_cast<size_t>(m * n), -1.0);
        GemmInOrder(m, n, k, {a.data(), ta ? m : k, ta}, {b.data(), tb ? k : n, tb}, c.data(), n, float32_steps);
        EXPECT_EQ(0, std::memcmp(c.data(), want.data(), c.size() * sizeof(double)))
            << "transposes " << t << ", float32 steps " << float32_steps << ", threads " << threads;
      }
    }
  }
}

TEST_F(GemmTest, EmptyInnerDimensionGivesZeros) {
  std::vector<double> c(6, 5.0);
  GemmDouble(2, 3, 0, {nullptr, 0, false}, {nullptr, 3, false}, c.data(), 3);
  for (double x : c) EXPECT_EQ(x, 0.0);
}

}  // namespace
}  // namespace parity::ops
