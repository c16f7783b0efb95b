#include "id_board.h"

#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

namespace sidecar {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

Clock::time_point Soon() { return Clock::now() + milliseconds(20); }
Clock::time_point Later() { return Clock::now() + std::chrono::seconds(10); }

// So a test exercises the wake-up, not an answer that was ready before the wait began.
void AwaitWaiter(const IdBoard& board) {
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (board.Waiting() == 0 && Clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(board.Waiting(), 1);
}

TEST(IdBoard, TimesOutWhenNothingIsPublished) {
  IdBoard board;
  EXPECT_EQ(board.WaitFor(1, Soon()).outcome, WaitOutcome::kTimeout);
}

TEST(IdBoard, ServesThePublishedIdOfTheSameAttempt) {
  IdBoard board;
  board.Observe(1, std::string("id-1"), "uid");
  WaitResult r = board.WaitFor(1, Soon());
  ASSERT_EQ(r.outcome, WaitOutcome::kReady);
  EXPECT_EQ(r.published.id, "id-1");
  EXPECT_EQ(r.published.attempt, 1);
  EXPECT_EQ(r.published.job_uid, "uid");
}

TEST(IdBoard, AttemptWithoutIdKeepsWaiting) {
  IdBoard board;
  board.Observe(2, std::nullopt);
  EXPECT_EQ(board.WaitFor(2, Soon()).outcome, WaitOutcome::kTimeout);
}

TEST(IdBoard, EarlierAttemptsIdIsNeverServedToALaterPod) {
  IdBoard board;
  board.Observe(1, std::string("old"));
  EXPECT_EQ(board.WaitFor(2, Soon()).outcome, WaitOutcome::kTimeout);
}

TEST(IdBoard, LaterAttemptMakesEarlierPodsStale) {
  IdBoard board;
  board.Observe(1, std::string("old"));
  board.Observe(2, std::string("new"));
  WaitResult r = board.WaitFor(1, Later());
  EXPECT_EQ(r.outcome, WaitOutcome::kStale);
  EXPECT_EQ(r.latest_attempt, 2);
  EXPECT_TRUE(r.published.id.empty());
  EXPECT_EQ(board.WaitFor(2, Soon()).published.id, "new");
}

TEST(IdBoard, LaterAttemptWithoutIdStillMakesEarlierPodsStale) {
  IdBoard board;
  board.Observe(1, std::string("old"));
  board.Observe(2, std::nullopt);
  EXPECT_EQ(board.WaitFor(1, Later()).outcome, WaitOutcome::kStale);
  EXPECT_EQ(board.WaitFor(2, Soon()).outcome, WaitOutcome::kTimeout);
}

TEST(IdBoard, DelayedEarlierEventDoesNotMoveTheBoardBack) {
  IdBoard board;
  board.Observe(3, std::string("three"));
  board.Observe(2, std::string("two"));
  EXPECT_EQ(board.LatestAttempt(), 3);
  EXPECT_EQ(board.WaitFor(3, Soon()).published.id, "three");
  EXPECT_EQ(board.WaitFor(2, Soon()).outcome, WaitOutcome::kStale);
}

TEST(IdBoard, RepeatedAttemptWithoutIdKeepsTheKnownId) {
  IdBoard board;
  board.Observe(1, std::string("id"), "uid");
  board.Observe(1, std::nullopt);
  WaitResult r = board.WaitFor(1, Soon());
  ASSERT_EQ(r.outcome, WaitOutcome::kReady);
  EXPECT_EQ(r.published.job_uid, "uid");
}

TEST(IdBoard, WakesAWaiterWhenTheIdArrives) {
  IdBoard board;
  auto waiter = std::async(std::launch::async, [&] { return board.WaitFor(4, Later()); });
  AwaitWaiter(board);
  board.Observe(4, std::string("four"));
  WaitResult r = waiter.get();
  EXPECT_EQ(r.outcome, WaitOutcome::kReady);
  EXPECT_EQ(r.published.id, "four");
}

TEST(IdBoard, WakesAWaiterWhenItsAttemptIsOvertaken) {
  IdBoard board;
  auto waiter = std::async(std::launch::async, [&] { return board.WaitFor(1, Later()); });
  AwaitWaiter(board);
  board.Observe(2, std::nullopt);
  EXPECT_EQ(waiter.get().outcome, WaitOutcome::kStale);
}

TEST(IdBoard, CloseWakesWaitersAndStaysClosed) {
  IdBoard board;
  auto waiter = std::async(std::launch::async, [&] { return board.WaitFor(1, Later()); });
  AwaitWaiter(board);
  board.Close();
  EXPECT_EQ(waiter.get().outcome, WaitOutcome::kClosed);
  board.Observe(1, std::string("id"));
  EXPECT_EQ(board.WaitFor(1, Later()).outcome, WaitOutcome::kClosed);
}

TEST(IdBoard, TimeoutHonoursTheDeadline) {
  IdBoard board;
  auto start = Clock::now();
  EXPECT_EQ(board.WaitFor(1, start + milliseconds(50)).outcome, WaitOutcome::kTimeout);
  EXPECT_GE(Clock::now() - start, milliseconds(50));
}

}  // namespace
}  // namespace sidecar
