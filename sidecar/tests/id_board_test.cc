#include "id_board.h"

#include <gtest/gtest.h>

namespace sidecar {
namespace {

TEST(IdBoard, TimesOutWhenNothingIsPublished) {
  IdBoard board;
  EXPECT_EQ(board.Check(1).outcome, WaitOutcome::kTimeout);
}

TEST(IdBoard, ServesThePublishedIdOfTheSameAttempt) {
  IdBoard board;
  board.Observe(1, std::string("id-1"), "uid");
  WaitResult r = board.Check(1);
  ASSERT_EQ(r.outcome, WaitOutcome::kReady);
  EXPECT_EQ(r.published.id, "id-1");
  EXPECT_EQ(r.published.attempt, 1);
  EXPECT_EQ(r.published.job_uid, "uid");
}

TEST(IdBoard, AttemptWithoutIdKeepsWaiting) {
  IdBoard board;
  board.Observe(2, std::nullopt);
  EXPECT_EQ(board.Check(2).outcome, WaitOutcome::kTimeout);
}

TEST(IdBoard, EarlierAttemptsIdIsNeverServedToALaterPod) {
  IdBoard board;
  board.Observe(1, std::string("old"));
  EXPECT_EQ(board.Check(2).outcome, WaitOutcome::kTimeout);
}

TEST(IdBoard, LaterAttemptMakesEarlierPodsStale) {
  IdBoard board;
  board.Observe(1, std::string("old"));
  board.Observe(2, std::string("new"));
  WaitResult r = board.Check(1);
  EXPECT_EQ(r.outcome, WaitOutcome::kStale);
  EXPECT_EQ(r.latest_attempt, 2);
  EXPECT_TRUE(r.published.id.empty());
  EXPECT_EQ(board.Check(2).published.id, "new");
}

TEST(IdBoard, LaterAttemptWithoutIdStillMakesEarlierPodsStale) {
  IdBoard board;
  board.Observe(1, std::string("old"));
  board.Observe(2, std::nullopt);
  EXPECT_EQ(board.Check(1).outcome, WaitOutcome::kStale);
  EXPECT_EQ(board.Check(2).outcome, WaitOutcome::kTimeout);
}

TEST(IdBoard, DelayedEarlierEventDoesNotMoveTheBoardBack) {
  IdBoard board;
  board.Observe(3, std::string("three"));
  board.Observe(2, std::string("two"));
  EXPECT_EQ(board.LatestAttempt(), 3);
  EXPECT_EQ(board.Check(3).published.id, "three");
  EXPECT_EQ(board.Check(2).outcome, WaitOutcome::kStale);
}

TEST(IdBoard, RepeatedAttemptWithoutIdKeepsTheKnownId) {
  IdBoard board;
  board.Observe(1, std::string("id"), "uid");
  board.Observe(1, std::nullopt);
  WaitResult r = board.Check(1);
  ASSERT_EQ(r.outcome, WaitOutcome::kReady);
  EXPECT_EQ(r.published.job_uid, "uid");
}

TEST(IdBoard, TellsOfEveryChangeAndStopsWhenAsked) {
  IdBoard board;
  int changes = 0;
  board.SetOnChange([&] { ++changes; });
  board.Observe(4, std::nullopt);
  board.Observe(4, std::string("four"));
  board.Observe(3, std::string("late"));  // ignored, but harmless to report
  EXPECT_GE(changes, 2);
  int before_close = changes;
  board.Close();
  EXPECT_EQ(changes, before_close + 1);
  board.SetOnChange(nullptr);
  board.Observe(5, std::string("five"));
  EXPECT_EQ(changes, before_close + 1);
}

TEST(IdBoard, CloseAnswersEveryAttemptAndStaysClosed) {
  IdBoard board;
  board.Observe(1, std::string("id"));
  board.Close();
  EXPECT_EQ(board.Check(1).outcome, WaitOutcome::kClosed);
  board.Observe(2, std::string("id2"));
  EXPECT_EQ(board.Check(2).outcome, WaitOutcome::kClosed);
}

TEST(IdBoard, TellsOfEachLaterAttemptOnce) {
  IdBoard board;
  int told = 0;
  board.SetOnNewAttempt([&told] { ++told; });
  board.Observe(2, std::nullopt);
  EXPECT_EQ(told, 1);
  board.Observe(2, std::string("id"));  // the same attempt, its id published
  board.Observe(1, std::nullopt);        // an earlier attempt: ignored
  board.Close();
  EXPECT_EQ(told, 1);
  board.SetOnNewAttempt(nullptr);
  board.Observe(3, std::nullopt);
  EXPECT_EQ(told, 1);
}

}  // namespace
}  // namespace sidecar
