#include "controller/in_parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace ncclop::controller {
namespace {

TEST(InParallel, CallsEachIndexOnce) {
  std::vector<std::atomic<int>> calls(1000);
  InParallel(calls.size(), 16, [&](std::size_t i) {
    ++calls[i];
    return true;
  });
  for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), 1) << i;
}

TEST(InParallel, OverlapsUpToTheLimitAndNoMore) {
  // Each call waits until `in_flight` calls run at once (or a generous deadline passes):
  // with calls one after another, the peak would stay 1.
  constexpr std::size_t kInFlight = 4;
  std::atomic<int> running{0};
  std::atomic<int> peak{0};
  InParallel(16, kInFlight, [&](std::size_t) {
    const int now = ++running;
    int seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (peak.load() < static_cast<int>(kInFlight) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    --running;
    return true;
  });
  EXPECT_EQ(peak.load(), static_cast<int>(kInFlight));
}

TEST(InParallel, FalseStopsTheCallsNotYetStarted) {
  std::atomic<int> calls{0};
  InParallel(1000, 1, [&](std::size_t i) {
    ++calls;
    return i < 9;
  });
  EXPECT_EQ(calls.load(), 10);
}

TEST(InParallel, NothingToDoAndZeroInFlight) {
  int calls = 0;
  InParallel(0, 16, [&](std::size_t) { return ++calls > 0; });
  EXPECT_EQ(calls, 0);
  InParallel(3, 0, [&](std::size_t) { return ++calls > 0; });
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace ncclop::controller
