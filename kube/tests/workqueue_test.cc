#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "kube/workqueue.h"

namespace kube {
namespace {

using namespace std::chrono_literals;

TEST(WorkQueueTest, DuplicatesAreMerged) {
  WorkQueue q;
  q.Add("ns/a");
  q.Add("ns/b");
  q.Add("ns/a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(q.Get(), "ns/a");
  EXPECT_EQ(q.Get(), "ns/b");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, MetricsHooksSeeEveryAddAndEachWait) {
  int adds = 0;
  std::vector<double> waits;
  WorkQueueOptions options;
  options.on_add = [&] { ++adds; };
  options.on_wait = [&](double seconds) { waits.push_back(seconds); };
  WorkQueue q(options);
  q.Add("ns/a");
  q.Add("ns/a");  // merged, still an add
  ASSERT_EQ(q.Get(), "ns/a");
  q.Add("ns/a");  // while processing: comes back after Done
  q.Done("ns/a");
  ASSERT_EQ(q.Get(), "ns/a");
  q.Done("ns/a");
  EXPECT_EQ(adds, 3);
  ASSERT_EQ(waits.size(), 2u) << "one wait per time the key was handed out";
  for (double w : waits) EXPECT_GE(w, 0.0);
}

// client-go's metrics: a merged add is no add, a key re-added while processing is one, its
// wait runs from that add; retries are rate-limited adds; the load counts the key in hand.
TEST(WorkQueueTest, ClientGoMetricsHooksAndLoad) {
  int queued = 0;
  int retries = 0;
  std::vector<double> taken;
  std::vector<double> done;
  WorkQueueOptions options;
  options.base_delay = std::chrono::milliseconds(1);
  options.on_queued = [&] { ++queued; };
  options.on_taken = [&](double seconds) { taken.push_back(seconds); };
  options.on_done = [&](double seconds) { done.push_back(seconds); };
  options.on_retry = [&] { ++retries; };
  WorkQueue q(options);
  q.Add("ns/a");
  q.Add("ns/a");  // merged: not an add for client-go
  q.Add("ns/b");
  EXPECT_EQ(q.Load().waiting, 2u);
  ASSERT_EQ(q.Get(), "ns/a");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // time in hand, measured below
  WorkQueueLoad load = q.Load();
  EXPECT_EQ(load.waiting, 1u);
  EXPECT_GE(load.longest_seconds, 0.02);
  EXPECT_GE(load.unfinished_seconds, load.longest_seconds);
  q.Add("ns/a");  // while processing: an add, waiting for Done
  EXPECT_EQ(q.Load().waiting, 2u);
  q.Done("ns/a");
  q.AddRateLimited("ns/b");  // already waiting: a retry, not an add
  ASSERT_TRUE(q.Get().has_value());
  ASSERT_TRUE(q.Get().has_value());
  EXPECT_GT(q.Load().longest_seconds, 0.0);
  q.Done("ns/a");
  q.Done("ns/b");
  EXPECT_EQ(queued, 3);
  EXPECT_EQ(retries, 1);
  EXPECT_EQ(taken.size(), 3u);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_GE(done[0], 0.02) << "work from Get to Done";
  load = q.Load();
  EXPECT_EQ(load.waiting, 0u);
  EXPECT_EQ(load.unfinished_seconds, 0.0);
}

TEST(WorkQueueTest, KeyAddedWhileProcessingComesBackAfterDone) {
  WorkQueue q;
  q.Add("k");
  auto k = q.Get();
  ASSERT_EQ(k, "k");
  q.Add("k");
  q.Add("k");
  EXPECT_EQ(q.Len(), 0u);  // not handed out while processing
  q.Done("k");
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.Get(), "k");
  q.Done("k");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, NoKeyIsProcessedTwiceAtOnceAcrossThreads) {
  WorkQueue q;
  constexpr int kWorkers = 8;
  constexpr int kKeys = 5;
  std::mutex mu;
  std::set<std::string> in_flight;
  std::atomic<bool> overlap{false};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (auto key = q.Get()) {
        {
          std::lock_guard lock(mu);
          if (!in_flight.insert(*key).second) overlap = true;
        }
        std::this_thread::yield();
        std::this_thread::sleep_for(50us);  // widen the window a second worker could use
        {
          std::lock_guard lock(mu);
          in_flight.erase(*key);
        }
        ++processed;
        q.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) q.Add("ns/k" + std::to_string(i % kKeys));
    });
  }
  for (auto& t : producers) t.join();
  // Every key is processed at least once after its last Add; wait until the queue drains.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (q.Len() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  q.ShutDown();
  for (auto& t : workers) t.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_GE(processed.load(), kKeys);
  EXPECT_LT(processed.load(), 8000);  // duplicates were merged
}

TEST(WorkQueueTest, DelayedAddsComeOutInDueOrder) {
  WorkQueue q;
  const auto start = std::chrono::steady_clock::now();
  q.AddAfter("late", 120ms);
  q.AddAfter("early", 30ms);
  q.Add("now");
  EXPECT_EQ(q.Get(), "now");
  EXPECT_EQ(q.Get(), "early");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
  EXPECT_EQ(q.Get(), "late");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 120ms);
}

TEST(WorkQueueTest, EarlierAddAfterWinsForTheSameKey) {
  WorkQueue q;
  const auto start = std::chrono::steady_clock::now();
  q.AddAfter("k", 10s);
  q.AddAfter("k", 20ms);
  EXPECT_EQ(q.Get(), "k");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  q.Done("k");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, PerKeyBackoffGrowsAndForgetResets) {
  WorkQueueOptions o;
  o.base_delay = 20ms;
  o.max_delay = 1s;
  o.qps = 1000;
  o.burst = 1000;
  WorkQueue q(o);
  q.AddRateLimited("k");
  EXPECT_EQ(q.NumRequeues("k"), 1);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(q.Get(), "k");
  q.Done("k");
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 15ms);
  q.AddRateLimited("k");
  q.AddRateLimited("k");  // third failure: 80 ms
  EXPECT_EQ(q.NumRequeues("k"), 3);
  q.Forget("k");
  EXPECT_EQ(q.NumRequeues("k"), 0);
}

TEST(WorkQueueTest, GetReturnsNulloptAfterShutDown) {
  WorkQueue q;
  std::thread waiter([&] { EXPECT_EQ(q.Get(), std::nullopt); });
  q.ShutDown();
  waiter.join();
  q.Add("ignored");
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_TRUE(q.ShuttingDown());
}

TEST(TokenBucketTest, BurstThenSteadyRate) {
  using Clock = TokenBucket::Clock;
  const auto t0 = Clock::time_point{} + 1h;
  TokenBucket b(10.0, 3, t0);
  EXPECT_EQ(b.Reserve(t0), Clock::duration::zero());
  EXPECT_EQ(b.Reserve(t0), Clock::duration::zero());
  EXPECT_EQ(b.Reserve(t0), Clock::duration::zero());
  auto wait = b.Reserve(t0);  // the 4th token arrives after 100 ms
  EXPECT_NEAR(std::chrono::duration<double>(wait).count(), 0.1, 1e-6);
  auto wait2 = b.Reserve(t0);
  EXPECT_NEAR(std::chrono::duration<double>(wait2).count(), 0.2, 1e-6);
  // One second later, tokens have refilled up to the burst and no further.
  EXPECT_EQ(b.Reserve(t0 + 2s), Clock::duration::zero());
}

TEST(WorkQueueTest, OverallRateLimitSpacesRateLimitedAdds) {
  WorkQueueOptions o;
  o.base_delay = 1ms;
  o.qps = 20;   // one token every 50 ms
  o.burst = 1;
  WorkQueue q(o);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) q.AddRateLimited("k" + std::to_string(i));
  for (int i = 0; i < 4; ++i) {
    auto k = q.Get();
    ASSERT_TRUE(k.has_value());
    q.Done(*k);
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 140ms);  // 3 waits of 50 ms
}

}  // namespace
}  // namespace kube
