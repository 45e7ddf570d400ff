#include "reference/core/parallel.h"

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace parity {
namespace {

class ParallelTest : public ::testing::Test {
 protected:
  void TearDown() override { SetThreadCount(0); }
};

TEST_F(ParallelTest, RunsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    SetThreadCount(threads);
    EXPECT_EQ(ThreadCount(), threads);
    std::vector<std::atomic<int>> seen(1000);
    ParallelFor(1000, [&](int64_t i) { seen[static_cast<size_t>(i)].fetch_add(1); });
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "index " << i << ", threads " << threads;
  }
}

TEST_F(ParallelTest, UsesMoreThanOneThreadWhenAsked) {
  SetThreadCount(2);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  ParallelFor(64, [&](int64_t) {
    const int now = inside.fetch_add(1) + 1;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    inside.fetch_sub(1);
  });
  EXPECT_EQ(most.load(), 2);
}

TEST_F(ParallelTest, NestedCallsAndConcurrentCallersFinish) {
  SetThreadCount(2);
  std::atomic<int64_t> total{0};
  auto outer = [&] {
    ParallelFor(8, [&](int64_t) { ParallelFor(16, [&](int64_t j) { total.fetch_add(j); }); });
  };
  std::thread a(outer), b(outer);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 8 * (15 * 16 / 2));
}

TEST_F(ParallelTest, RethrowsATaskExceptionAfterTheOthersFinish) {
  SetThreadCount(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(ParallelFor(32,
                           [&](int64_t i) {
                             ran.fetch_add(1);
                             if (i == 5) throw std::runtime_error("task 5");
                           }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 32);
}

}  // namespace
}  // namespace parity
