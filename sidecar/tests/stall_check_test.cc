#include "stall_check.h"

#include <gtest/gtest.h>

namespace sidecar {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const auto kStart = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
const auto kWall = std::chrono::system_clock::time_point() + std::chrono::hours(24 * 365 * 57);

RankProgress Progress(int64_t rank, int64_t step, int received_second, bool done = false) {
  RankProgress progress;
  progress.report.rank = rank;
  progress.report.step = step;
  progress.report.done = done;
  progress.received = {kStart + seconds(received_second), kWall + seconds(received_second)};
  return progress;
}

TEST(StallCheck, ARankSilentForTheTimeoutIsStalled) {
  std::vector<RankProgress> ranks = {Progress(0, 10, 0), Progress(1, 12, 5)};
  EXPECT_TRUE(FindStalls(ranks, kStart + milliseconds(59999), seconds(60)).empty());
  std::vector<Stall> stalls = FindStalls(ranks, kStart + seconds(62), seconds(60));
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0].rank, 0);
  EXPECT_EQ(stalls[0].last_step, 10);
  EXPECT_EQ(stalls[0].silent, seconds(62));
  EXPECT_EQ(FindStalls(ranks, kStart + seconds(70), seconds(60)).size(), 2u);
}

TEST(StallCheck, NeitherDoneRanksNorRanksThatNeverReportedStall) {
  EXPECT_TRUE(FindStalls({}, kStart + seconds(1000), seconds(1)).empty());
  EXPECT_TRUE(FindStalls({Progress(0, 10, 0, /*done=*/true)}, kStart + seconds(1000), seconds(1)).empty());
}

TEST(StallCheck, NcclsReasonsCountOnlyWhileARankIsWatched) {
  EXPECT_FALSE(AnyRankWatched({})) << "no rank reported";
  EXPECT_FALSE(AnyRankWatched({Progress(0, 10, 0, /*done=*/true), Progress(1, 10, 0, /*done=*/true)}));
  EXPECT_TRUE(AnyRankWatched({Progress(0, 10, 0, /*done=*/true), Progress(1, 10, 0)}));
}

TEST(StallCheck, TheMessageNamesEachRankItsSilenceAndItsLastStep) {
  std::vector<Stall> stalls = FindStalls({Progress(3, 1234, 0), Progress(5, 7, 1)}, kStart + seconds(62), seconds(60));
  EXPECT_EQ(StallMessage(stalls),
            "rank 3 sent no progress report for 62s (last step 1234 at 2026-12-18T00:00:00.000Z); "
            "rank 5 sent no progress report for 61s (last step 7 at 2026-12-18T00:00:01.000Z)");
}

TEST(StallCheck, TheMessageFitsATerminationMessage) {
  std::vector<RankProgress> ranks;
  for (int rank = 0; rank < 200; ++rank) ranks.push_back(Progress(rank, 1000000 + rank, 0));
  std::string message = StallMessage(FindStalls(ranks, kStart + seconds(100), seconds(60)));
  EXPECT_LE(message.size(), kTerminationMessageMaxBytes);
  EXPECT_NE(message.find("rank 0 sent"), std::string::npos);
  EXPECT_NE(message.find(" more ranks"), std::string::npos);
}

TEST(StallCheck, LooksEverySecondOrAQuarterOfAShortTimeout) {
  EXPECT_EQ(StallCheckInterval(seconds(60)), milliseconds(1000));
  EXPECT_EQ(StallCheckInterval(seconds(2)), milliseconds(500));
  EXPECT_EQ(StallCheckInterval(seconds(1)), milliseconds(250));
}

}  // namespace
}  // namespace sidecar
