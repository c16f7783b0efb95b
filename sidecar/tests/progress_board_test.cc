#include "progress_board.h"

#include <gtest/gtest.h>

namespace sidecar {
namespace {

using std::chrono::seconds;

const auto kStart = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
const auto kWall = std::chrono::system_clock::time_point() + std::chrono::hours(24 * 365 * 57);  // 2026-12-18

ReceivedAt At(int second) { return {kStart + seconds(second), kWall + seconds(second)}; }

ProgressReport Report(int64_t rank, int64_t step) {
  ProgressReport report;
  report.rank = rank;
  report.step = step;
  return report;
}

TEST(ProgressBoard, KeepsTheLastReportOfEachRank) {
  ProgressBoard board;
  EXPECT_TRUE(board.Ranks().empty());
  EXPECT_FALSE(board.Newest());
  board.Record(Report(1, 10), At(0));
  board.Record(Report(0, 5), At(1));
  board.Record(Report(1, 11), At(2));
  std::vector<RankProgress> ranks = board.Ranks();
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].report.rank, 0);
  EXPECT_EQ(ranks[1].report.step, 11);
  EXPECT_EQ(ranks[1].received.steady, At(2).steady);
}

TEST(ProgressBoard, NewestIsTheGreatestStepThenTheLastReceived) {
  ProgressBoard board;
  board.Record(Report(0, 7), At(5));
  board.Record(Report(1, 9), At(1));
  EXPECT_EQ(board.Newest()->report.rank, 1);
  board.Record(Report(2, 9), At(3));
  EXPECT_EQ(board.Newest()->report.rank, 2);
}

TEST(ProgressBoard, HoldsABoundedNumberOfRanks) {
  ProgressBoard board;
  for (size_t rank = 0; rank < ProgressBoard::kMaxRanks; ++rank) EXPECT_TRUE(board.Record(Report(rank, 1), At(0)));
  EXPECT_FALSE(board.Record(Report(ProgressBoard::kMaxRanks, 1), At(0)));
  EXPECT_TRUE(board.Record(Report(0, 2), At(1)));  // a known rank still reports
  EXPECT_EQ(board.Ranks().size(), ProgressBoard::kMaxRanks);
}

TEST(ProgressBoard, ShowsRanksAsJson) {
  ProgressBoard board;
  ProgressReport full = Report(3, 12);
  full.total = 100;
  full.metrics = {{"loss", 0.5}};
  board.Record(full, At(0));
  ProgressReport done = Report(4, 8);
  done.done = true;
  board.Record(done, At(1));
  nlohmann::json ranks = RanksJson(board.Ranks());
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0], nlohmann::json::parse(R"({"rank":3,"step":12,"total":100,"metrics":{"loss":0.5},"done":false,
                                                  "time":"2026-12-18T00:00:00.000Z"})"));
  EXPECT_EQ(ranks[1]["total"], nullptr);
  EXPECT_EQ(ranks[1]["metrics"], nlohmann::json::object());
  EXPECT_EQ(ranks[1]["done"], true);
  EXPECT_EQ(ranks[1]["time"], "2026-12-18T00:00:01.000Z");
}

}  // namespace
}  // namespace sidecar
