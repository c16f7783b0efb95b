#include "ras_report.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ras_fixtures.h"

namespace sidecar {
namespace {

RasReport MustParse(RasFormat format, const std::string& text) {
  RasParse parsed = ParseRasAnswer(format, text);
  EXPECT_TRUE(parsed.report.has_value()) << parsed.error;
  return parsed.report.value_or(RasReport{});
}

TEST(RasReport, ReadsEveryRankOfAHealthyJsonAnswer) {
  RasReport report = MustParse(RasFormat::kJson, ras_fixtures::kHealthy2289);
  EXPECT_EQ(report.nccl_version, "2.28.9");
  EXPECT_FALSE(report.repaired);
  ASSERT_EQ(report.communicators.size(), 1u);
  const RasCommunicator& comm = report.communicators[0];
  EXPECT_EQ(comm.hash, "0xae94423cfbb2ef4a");
  EXPECT_EQ(comm.Id(), "0xae94423cfbb2ef4a/0xb7e7187447156001:0xb8242ed28a71381e");
  EXPECT_EQ(comm.size, 2);
  ASSERT_EQ(comm.ranks.size(), 2u);
  EXPECT_TRUE(comm.missing_ranks.empty());
  const RasRank& one = comm.ranks[1];
  EXPECT_EQ(one.rank, 1);
  EXPECT_EQ(one.host, "10.0.0.8");
  EXPECT_EQ(one.pid, 42);
  EXPECT_EQ(one.init_state, 0);
  EXPECT_FALSE(one.abort_flag);
  EXPECT_EQ(one.collective_counts.at("AllReduce"), 120u);
  EXPECT_EQ(one.collective_counts.at("Broadcast"), 1u);
  EXPECT_EQ(one.collective_counts.size(), 5u);
}

TEST(RasReport, PutsBackTheCommaNccl2289LeavesOutOfAMissingRank) {
  // As NCCL 2.28.9 sends it, the answer is not JSON...
  EXPECT_TRUE(nlohmann::json::parse(ras_fixtures::kDeadPeer2289, nullptr, false).is_discarded());
  // ...and it is exactly the answer that matters.
  RasReport report = MustParse(RasFormat::kJson, ras_fixtures::kDeadPeer2289);
  EXPECT_TRUE(report.repaired);
  ASSERT_EQ(report.communicators.size(), 1u);
  ASSERT_EQ(report.communicators[0].missing_ranks.size(), 1u);
  const RasMissingRank& dead = report.communicators[0].missing_ranks[0];
  EXPECT_EQ(dead.rank, 1);
  EXPECT_EQ(dead.pid, 42);
  EXPECT_EQ(dead.host, "10.0.0.8");
  EXPECT_TRUE(dead.unresponsive);
  EXPECT_TRUE(dead.considered_dead);
}

TEST(RasReport, ReadsTheFixedFormatOfLaterNcclUnchanged) {
  RasReport report = MustParse(RasFormat::kJson, ras_fixtures::kUnresponsivePeer2307);
  EXPECT_FALSE(report.repaired);
  EXPECT_EQ(report.nccl_version, "2.30.7");
  EXPECT_EQ(report.timeouts_count, 2);
  const RasCommunicator& comm = report.communicators.at(0);
  EXPECT_EQ(comm.ranks.at(0).async_error, 6);
  EXPECT_TRUE(comm.missing_ranks.at(0).unresponsive);
  EXPECT_FALSE(comm.missing_ranks.at(0).considered_dead);
}

TEST(RasReport, AProcessWithoutCommunicatorsIsAnEmptyReport) {
  RasReport report = MustParse(RasFormat::kJson, ras_fixtures::kNoCommunicators2289);
  EXPECT_TRUE(report.communicators.empty());
}

TEST(RasReport, TheRepairTouchesNothingElse) {
  bool repaired = false;
  // Valid JSON stays as it is, digits and newlines inside strings included.
  std::string valid = "{\n \"a\": 1,\n \"b\": \"x 2\\n\\\"3\"\n}";
  EXPECT_EQ(RepairRasJson(valid, &repaired), valid);
  EXPECT_FALSE(repaired);
  EXPECT_EQ(RepairRasJson("{\"a\": -1\n  \"b\": 2}", &repaired), "{\"a\": -1,\n  \"b\": 2}");
  EXPECT_TRUE(repaired);
}

TEST(RasReport, RefusesWhatIsNotAReport) {
  for (const char* bad : {"", "  \n", "ERROR: Unknown command status\n", "[]", "{\"nccl_version\": \"2.28.9\"}",
                          "{\"communicators\": 3}", "{\"communicators\": ["}) {
    RasParse parsed = ParseRasAnswer(RasFormat::kJson, bad);
    EXPECT_FALSE(parsed.report) << bad;
    EXPECT_FALSE(parsed.error.empty()) << bad;
  }
  EXPECT_FALSE(ParseRasAnswer(RasFormat::kText, "hello\n").report);
}

TEST(RasReport, FieldsOfAnotherTypeReadAsAbsent) {
  RasReport report = MustParse(RasFormat::kJson,
                               R"({"communicators": [{"hash": 7, "size": "2", "ranks": [{"rank": 0, "pid": "x",
                                   "status": [], "collective_counts": {"AllReduce": "9", "Reduce": 4}}], "missing_ranks": {}},
                                   3]})");
  ASSERT_EQ(report.communicators.size(), 1u);
  EXPECT_EQ(report.communicators[0].hash, "");
  EXPECT_EQ(report.communicators[0].size, 0);
  const RasRank& rank = report.communicators[0].ranks.at(0);
  EXPECT_EQ(rank.pid, -1);
  EXPECT_EQ(rank.collective_counts.size(), 1u);
  EXPECT_EQ(rank.collective_counts.at("Reduce"), 4u);
}

TEST(RasReport, KeepsTheProblemBlocksOfATextAnswerInNcclsWords) {
  RasReport report = MustParse(RasFormat::kText, ras_fixtures::kText2289);
  EXPECT_EQ(report.format, RasFormat::kText);
  EXPECT_EQ(report.nccl_version, "2.28.9");
  ASSERT_EQ(report.blocks.size(), 4u);
  EXPECT_EQ(report.blocks[0].section, "Errors");
  EXPECT_EQ(report.blocks[0].heading, "DEAD");
  ASSERT_EQ(report.blocks[0].lines.size(), 2u);
  EXPECT_EQ(report.blocks[0].lines[0], "1 job process is considered dead (unreachable via the RAS network)");
  EXPECT_EQ(report.blocks[1].heading, "#0-0 (cf264af53edbe986) INCOMPLETE");
  EXPECT_EQ(report.blocks[2].section, "Warnings");
  EXPECT_EQ(report.blocks[2].heading, "TIMEOUT");
  EXPECT_EQ(report.blocks[3].heading, "#1-0 (27a079b828ff1a75) MISMATCH");
  EXPECT_EQ(report.blocks[3].lines[1], "26 ranks have launched up to operation 6650");
}

TEST(RasReport, NamesResultsAsRasDoes) {
  EXPECT_EQ(NcclResultWords(6), "Remote process error");
  EXPECT_EQ(NcclResultWords(2), "System error");
  EXPECT_EQ(NcclResultWords(42), "Unexpected error");
}

}  // namespace
}  // namespace sidecar
