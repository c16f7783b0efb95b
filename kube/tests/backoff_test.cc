#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kube/backoff.h"

namespace kube {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, GrowsExponentiallyWithoutJitter) {
  BackoffPolicy p{milliseconds(100), milliseconds(1000), 2.0, 0.0};
  EXPECT_EQ(BackoffDelay(p, 0, 0.5), milliseconds(100));
  EXPECT_EQ(BackoffDelay(p, 1, 0.5), milliseconds(200));
  EXPECT_EQ(BackoffDelay(p, 3, 0.5), milliseconds(800));
  EXPECT_EQ(BackoffDelay(p, 4, 0.5), milliseconds(1000));
  EXPECT_EQ(BackoffDelay(p, 10000, 0.5), milliseconds(1000));  // no overflow
}

TEST(BackoffTest, JitterStaysWithinBounds) {
  BackoffPolicy p{milliseconds(100), milliseconds(5000), 2.0, 0.5};
  for (int attempt = 0; attempt < 40; ++attempt) {
    for (double r : {0.0, 0.25, 0.999999, 1.0}) {
      auto d = BackoffDelay(p, attempt, r);
      EXPECT_LE(d, p.max);
      EXPECT_GE(d, milliseconds(50));
    }
  }
  EXPECT_EQ(BackoffDelay(p, 2, 0.0), milliseconds(200));  // 400 * (1 - 0.5)
  EXPECT_EQ(BackoffDelay(p, 2, 1.0), milliseconds(400));
}

TEST(BackoffTest, StatefulBackoffResets) {
  Backoff b(BackoffPolicy{milliseconds(10), milliseconds(100), 2.0, 0.0});
  EXPECT_EQ(b.Next(), milliseconds(10));
  EXPECT_EQ(b.Next(), milliseconds(20));
  EXPECT_EQ(b.attempts(), 2);
  b.Reset();
  EXPECT_EQ(b.Next(), milliseconds(10));
}

TEST(BackoffTest, SleepForReturnsEarlyWhenStopped) {
  std::stop_source source;
  std::thread stopper([&] { source.request_stop(); });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(SleepFor(milliseconds(60000), source.get_token()));
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(SleepFor(milliseconds(1), std::stop_token()));
}

}  // namespace
}  // namespace kube
