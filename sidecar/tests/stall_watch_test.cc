// The stall watch's thread: a silent rank or another source's reason reaches on_stall once;
// nothing does after Stop().
#include "stall_watch.h"

#include <atomic>
#include <chrono>
#include <future>

#include <gtest/gtest.h>

namespace sidecar {
namespace {

using std::chrono::seconds;

TEST(StallWatch, ASilentRankIsReportedOnce) {
  ProgressBoard board;
  ProgressReport report;
  report.rank = 2;
  report.step = 9;
  board.Record(report, {std::chrono::steady_clock::now(), std::chrono::system_clock::now()});
  std::promise<std::string> reason;
  std::atomic<int> calls{0};
  StallWatch watch(board, seconds(1), [&](const std::string& message) {
    if (calls++ == 0) reason.set_value(message);
  });
  watch.Start();
  auto future = reason.get_future();
  ASSERT_EQ(future.wait_for(seconds(5)), std::future_status::ready);
  EXPECT_EQ(future.get().rfind("rank 2 sent no progress report for 1s (last step 9 at ", 0), 0u);
  watch.Stop();
  EXPECT_EQ(calls.load(), 1);
}

TEST(StallWatch, AnotherSourcesReasonCountsWhenNoRankStalled) {
  ProgressBoard board;
  ProgressReport report;
  report.rank = 0;
  board.Record(report, {std::chrono::steady_clock::now() + seconds(60), std::chrono::system_clock::now()});
  std::promise<std::string> reason;
  StallWatch watch(board, seconds(1), [&](const std::string& message) { reason.set_value(message); },
                   [](std::chrono::steady_clock::time_point) -> std::optional<std::string> { return "NCCL RAS: dead"; });
  watch.Start();
  auto future = reason.get_future();
  ASSERT_EQ(future.wait_for(seconds(5)), std::future_status::ready);
  EXPECT_EQ(future.get(), "NCCL RAS: dead");
}

TEST(StallWatch, NothingAfterStop) {
  ProgressBoard board;
  std::atomic<int> asked{0};
  std::atomic<int> calls{0};
  StallWatch watch(board, seconds(1), [&](const std::string&) { ++calls; },
                   [&](std::chrono::steady_clock::time_point) -> std::optional<std::string> {
                     ++asked;
                     return std::nullopt;
                   });
  watch.Start();
  watch.Stop();
  const int asked_at_stop = asked.load();
  watch.Stop();  // twice is fine
  EXPECT_EQ(asked.load(), asked_at_stop);
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace
}  // namespace sidecar
