#include "ras_watch.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ras_fixtures.h"

namespace sidecar {
namespace {

using std::chrono::seconds;
constexpr seconds kTimeout{300};
const RasWatch::Clock::time_point kStart{};

RasWatch::Clock::time_point At(int s) { return kStart + seconds(s); }

// A communicator of `counts.size()` ranks, rank i having launched counts[i] AllReduces (the
// shape of NCCL's JSON answer, ras_fixtures.h).
RasReport Report(const std::vector<uint64_t>& counts) {
  RasCommunicator comm;
  comm.hash = "0x27a079b828ff1a75";
  comm.secondary_hash = "0x1:0x2";
  comm.size = static_cast<int>(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    RasRank rank;
    rank.rank = static_cast<int>(i);
    rank.host = "10.0.0." + std::to_string(i);
    rank.pid = 100 + static_cast<int64_t>(i);
    rank.cuda_dev = 0;
    rank.collective_counts = {{"Broadcast", 1}, {"Reduce", 0}, {"AllGather", 0}, {"ReduceScatter", 0},
                              {"AllReduce", counts[i]}};
    comm.ranks.push_back(rank);
  }
  RasReport report;
  report.nccl_version = "2.28.9";
  report.communicators.push_back(comm);
  return report;
}

RasReport Parsed(RasFormat format, const char* text) {
  RasParse parsed = ParseRasAnswer(format, text);
  EXPECT_TRUE(parsed.report) << parsed.error;
  return parsed.report.value_or(RasReport{});
}

RasReport WithMissing(RasReport report, bool unresponsive, bool dead) {
  RasMissingRank missing;
  missing.rank = 3;
  missing.host = "10.0.0.3";
  missing.pid = 103;
  missing.cuda_dev = 0;
  missing.unresponsive = unresponsive;
  missing.considered_dead = dead;
  report.communicators[0].ranks.pop_back();
  report.communicators[0].missing_ranks.push_back(missing);
  return report;
}

TEST(RasWatch, ATrainingJobWhoseCountsMoveHasNoReason) {
  RasWatch watch(kTimeout);
  for (int t = 0; t <= 1200; t += 30) {
    uint64_t n = 100 + static_cast<uint64_t>(t);
    watch.Observe(At(t), Report({n, n, n + 1, n}));  // a rank ahead for a moment: NCCL outpaces RAS
    EXPECT_FALSE(watch.Reason()) << t;
  }
}

TEST(RasWatch, CountsThatStopWhileEqualAreNoReason) {
  // Evaluation, a checkpoint, or a collective hung inside the network: RAS cannot tell them apart.
  RasWatch watch(kTimeout);
  for (int t = 0; t <= 1200; t += 30) watch.Observe(At(t), Report({500, 500, 500, 500}));
  EXPECT_FALSE(watch.Reason());
}

TEST(RasWatch, ACollectiveSomeRanksNeverJoinedIsStuckAfterTheTimeout) {
  RasWatch watch(kTimeout);
  watch.Observe(At(0), Report({6649, 6649, 6649, 6649}));
  watch.Observe(At(30), Report({6650, 6649, 6650, 6650}));  // rank 1 never launches 6650
  watch.Observe(At(300), Report({6650, 6649, 6650, 6650}));
  EXPECT_FALSE(watch.Reason()) << "270 s is not 300";
  watch.Observe(At(330), Report({6650, 6649, 6650, 6650}));
  std::optional<std::string> reason = watch.Reason();
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason,
            "NCCL RAS: communicator 0x27a079b828ff1a75 (4 ranks): Communicator ranks have different AllReduce "
            "operation counts: 3 ranks have launched up to operation 6650, 1 rank has launched up to operation "
            "6649 (rank 1); no count moved (reported for 300 s)");
}

TEST(RasWatch, AnyCountThatMovesStartsTheWaitAgain) {
  RasWatch watch(kTimeout);
  watch.Observe(At(0), Report({10, 9, 10, 10}));
  watch.Observe(At(290), Report({10, 9, 10, 10}));
  watch.Observe(At(320), Report({11, 10, 11, 11}));  // all moved, still one behind
  watch.Observe(At(600), Report({11, 10, 11, 11}));
  EXPECT_FALSE(watch.Reason());
  watch.Observe(At(620), Report({11, 10, 11, 11}));
  EXPECT_TRUE(watch.Reason());
}

TEST(RasWatch, ADeadPeerIsAReasonInNcclsWordsOnceItLasts) {
  RasWatch watch(kTimeout);
  RasReport dead = Parsed(RasFormat::kJson, ras_fixtures::kDeadPeer2289);
  watch.Observe(At(0), dead);
  EXPECT_FALSE(watch.Reason());
  watch.Observe(At(300), dead);
  std::optional<std::string> reason = watch.Reason();
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason,
            "NCCL RAS: rank 1 of communicator 0xae94423cfbb2ef4a (2 ranks) (GPU 0 managed by process 42 on node "
            "10.0.0.8) is considered dead (unreachable via the RAS network) (reported for 300 s)");
}

TEST(RasWatch, AnUnresponsivePeerThatAnswersAgainIsForgiven) {
  RasWatch watch(kTimeout);
  RasReport healthy = Report({5, 5, 5, 5});
  RasReport silent = WithMissing(healthy, /*unresponsive=*/true, /*dead=*/false);
  watch.Observe(At(0), silent);
  watch.Observe(At(200), silent);
  watch.Observe(At(230), healthy);
  watch.Observe(At(260), silent);
  watch.Observe(At(500), silent);
  EXPECT_FALSE(watch.Reason()) << "silent since 260 only";
  watch.Observe(At(560), silent);
  std::optional<std::string> reason = watch.Reason();
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("missing communicator data from rank 3 of communicator 0x27a079b828ff1a75 (4 ranks) (GPU 0 "
                         "managed by process 103 on node 10.0.0.3): unresponsive"),
            std::string::npos)
      << *reason;
}

TEST(RasWatch, ARankThatLeftTheCommunicatorIsNoReason) {
  // Missing but reachable: its process finalized or destroyed the communicator (RAS's NOCOMM).
  RasWatch watch(kTimeout);
  RasReport left = WithMissing(Report({5, 5, 5, 5}), /*unresponsive=*/false, /*dead=*/false);
  for (int t = 0; t <= 900; t += 30) watch.Observe(At(t), left);
  EXPECT_FALSE(watch.Reason());
}

TEST(RasWatch, AnAsynchronousErrorThatStaysIsAReason) {
  RasWatch watch(kTimeout);
  RasReport report = Parsed(RasFormat::kJson, ras_fixtures::kUnresponsivePeer2307);
  watch.Observe(At(0), report);
  watch.Observe(At(300), report);
  std::optional<std::string> reason = watch.Reason();
  ASSERT_TRUE(reason);
  // Both problems began together: the missing rank is named first, the error counted.
  EXPECT_NE(reason->find("rank 1 of communicator 0xae94423cfbb2ef4a"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("; 1 more problem reported by NCCL RAS"), std::string::npos) << *reason;
  std::vector<RasCondition> conditions = RasConditions(report);
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[1].text,
            "NCCL RAS: rank 0 of communicator 0xae94423cfbb2ef4a (2 ranks) (GPU 0 managed by process 41 on node "
            "10.0.0.7) reported Remote process error (asynchronous error)");
}

TEST(RasWatch, TheOldestProblemIsTheReason) {
  RasWatch watch(kTimeout);
  // Rank 3 has left the communicator (no problem) while rank 1 lags; later RAS declares rank 3's
  // process dead. The lag is older, so it is the reason, though a death is more severe.
  RasReport stuck = WithMissing(Report({7, 6, 7, 7}), /*unresponsive=*/false, /*dead=*/false);
  watch.Observe(At(0), stuck);
  RasReport both = WithMissing(Report({7, 6, 7, 7}), /*unresponsive=*/true, /*dead=*/true);
  watch.Observe(At(100), both);
  watch.Observe(At(400), both);
  std::optional<std::string> reason = watch.Reason();
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->find("NCCL RAS: communicator 0x27a079b828ff1a75 (4 ranks): Communicator ranks have different"), 0u)
      << *reason;
  EXPECT_NE(reason->find("(reported for 400 s); 1 more problem reported by NCCL RAS"), std::string::npos) << *reason;
}

TEST(RasWatch, NoNcclOrRasOffNeverGivesAReason) {
  RasWatch watch(kTimeout);
  watch.Forget();  // what the poller does when nothing listens on 28028
  EXPECT_FALSE(watch.Reason());
  EXPECT_FALSE(watch.last_report());
  // A process whose communicators are gone answers with none.
  RasReport none = Parsed(RasFormat::kJson, ras_fixtures::kNoCommunicators2289);
  for (int t = 0; t <= 900; t += 30) watch.Observe(At(t), none);
  EXPECT_FALSE(watch.Reason());
}

TEST(RasWatch, ForgettingDropsEverySeenProblem) {
  RasWatch watch(kTimeout);
  RasReport stuck = Report({7, 6, 7, 7});
  watch.Observe(At(0), stuck);
  watch.Observe(At(300), stuck);
  EXPECT_TRUE(watch.Reason());
  watch.Forget();  // the trainer's processes went away (RAS stopped listening)
  EXPECT_FALSE(watch.Reason());
  watch.Observe(At(330), stuck);
  EXPECT_FALSE(watch.Reason());
}

TEST(RasWatch, ACommunicatorBeingAbortedIsNotStuck) {
  RasReport report = Report({7, 6, 7, 7});
  report.communicators[0].ranks[2].abort_flag = true;
  EXPECT_TRUE(RasConditions(report).empty());
}

TEST(RasWatch, AZeroTimeoutGivesTheReasonAtOnce) {
  RasWatch watch(seconds(0));
  watch.Observe(At(0), Report({7, 0, 7, 7}));
  std::optional<std::string> reason = watch.Reason();
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("3 ranks have launched up to operation 7, 1 rank has not launched any operations (rank 1)"),
            std::string::npos)
      << *reason;
}

TEST(RasWatch, ReadsTheTextOfAnOlderNcclTheSameWay) {
  RasWatch watch(kTimeout);
  RasReport text = Parsed(RasFormat::kText, ras_fixtures::kText2289);
  std::vector<RasCondition> conditions = RasConditions(text);
  ASSERT_EQ(conditions.size(), 3u);
  EXPECT_EQ(conditions[0].text,
            "NCCL RAS: DEAD: 1 job process is considered dead (unreachable via the RAS network); Process 3487984 on "
            "node 172.16.64.213 managing GPU 5");
  EXPECT_EQ(conditions[1].text.find("NCCL RAS: (cf264af53edbe986) INCOMPLETE: Missing communicator data from 1 rank"),
            0u);
  EXPECT_EQ(conditions[2].text.find("NCCL RAS: (27a079b828ff1a75) MISMATCH: Communicator ranks have different "
                                    "AllReduce operation counts; 26 ranks have launched up to operation 6650"),
            0u);
  watch.Observe(At(0), text);
  // The same answer later, its table's groups numbered the other way round: the same problems.
  std::string renumbered = ras_fixtures::kText2289;
  renumbered.replace(renumbered.find("#1-0"), 4, "#0-0");
  renumbered.replace(renumbered.find("#0-0 (cf26"), 4, "#1-0");
  watch.Observe(At(300), Parsed(RasFormat::kText, renumbered.c_str()));
  std::optional<std::string> reason = watch.Reason();
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->find("NCCL RAS: DEAD: 1 job process is considered dead"), 0u) << *reason;
  EXPECT_NE(reason->find("; 2 more problems reported by NCCL RAS"), std::string::npos) << *reason;
}

}  // namespace
}  // namespace sidecar
