#include "progress_report.h"

#include <gtest/gtest.h>

#include "contract/names.h"

namespace sidecar {
namespace {

ProgressReport Parsed(std::string_view datagram, int world_size = 8) {
  auto parsed = ParseProgressReport(datagram, world_size);
  EXPECT_TRUE(std::holds_alternative<ProgressReport>(parsed))
      << datagram << ": " << std::get<ReportRefused>(parsed).reason;
  return std::holds_alternative<ProgressReport>(parsed) ? std::get<ProgressReport>(parsed) : ProgressReport{};
}

std::string Refused(std::string_view datagram, int world_size = 8) {
  auto parsed = ParseProgressReport(datagram, world_size);
  EXPECT_TRUE(std::holds_alternative<ReportRefused>(parsed)) << datagram;
  return std::holds_alternative<ReportRefused>(parsed) ? std::get<ReportRefused>(parsed).reason : "";
}

TEST(ProgressReport, TakesTheWholeReport) {
  ProgressReport report = Parsed(R"({"rank":3,"step":1234,"total":5000,"metrics":{"loss":0.25,"tokens":1e6}})");
  EXPECT_EQ(report.rank, 3);
  EXPECT_EQ(report.step, 1234);
  EXPECT_EQ(report.total, 5000);
  ASSERT_EQ(report.metrics.size(), 2u);
  EXPECT_EQ(report.metrics[0], std::make_pair(std::string("loss"), 0.25));
  EXPECT_EQ(report.metrics[1], std::make_pair(std::string("tokens"), 1e6));
  EXPECT_FALSE(report.done);
}

TEST(ProgressReport, TotalMetricsAndDoneAreOptional) {
  ProgressReport report = Parsed(R"({"rank":0,"step":0})");
  EXPECT_FALSE(report.total);
  EXPECT_TRUE(report.metrics.empty());
  EXPECT_FALSE(report.done);
  EXPECT_FALSE(Parsed(R"({"rank":0,"step":1,"total":null,"metrics":null})").total);
  EXPECT_TRUE(Parsed(R"({"rank":0,"step":9,"done":true})").done);
}

TEST(ProgressReport, RefusesWhatIsNotAReport) {
  EXPECT_EQ(Refused("not json"), "not a JSON object");
  EXPECT_EQ(Refused("[1,2]"), "not a JSON object");
  EXPECT_NE(Refused(R"({"step":1})").find("rank"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":8,"step":1})").find("0 to 7"), std::string::npos);  // past the world
  EXPECT_NE(Refused(R"({"rank":-1,"step":1})").find("rank"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":"0","step":1})").find("rank"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":0})").find("step"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":0,"step":1.5})").find("step"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":0,"step":-2})").find("step"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":0,"step":1,"total":"9"})").find("total"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":0,"step":1,"done":1})").find("done"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":0,"step":1,"metrics":[1]})").find("metrics"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":0,"step":1,"metrics":{"loss":"low"}})").find("loss"), std::string::npos);
  EXPECT_NE(Refused(R"({"rank":0,"step":1,"metrics":{"":1}})").find("metric"), std::string::npos);
}

TEST(ProgressReport, RefusesMoreThanTheContractAllows) {
  std::string long_name(contract::kProgressMetricNameMax + 1, 'n');
  EXPECT_NE(Refused(R"({"rank":0,"step":1,"metrics":{")" + long_name + R"(":1}})").find("metric"), std::string::npos);
  std::string many = R"({"rank":0,"step":1,"metrics":{)";
  for (int i = 0; i <= contract::kProgressMaxMetrics; ++i) many += (i ? "," : "") + ("\"m" + std::to_string(i) + "\":1");
  EXPECT_NE(Refused(many + "}}").find("at most"), std::string::npos);
  std::string big = R"({"rank":0,"step":1,"pad":")" + std::string(contract::kProgressReportMaxBytes, 'x') + "\"}";
  EXPECT_NE(Refused(big).find("bytes"), std::string::npos);
}

}  // namespace
}  // namespace sidecar
