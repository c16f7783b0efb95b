#include "observed/progress.h"

#include <gtest/gtest.h>

#include <string>

namespace ncclop::observed {
namespace {

TEST(ParseProgressAnnotation, ReadsAWholeReport) {
  auto p = ParseProgressAnnotation(
      R"({"attempt":2,"step":1234,"total":10000,"time":"2026-12-04T20:00:00.250Z","metrics":{"loss":0.3125,"tokens/s":51200}})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->attempt, 2);
  EXPECT_EQ(p->step, 1234);
  EXPECT_EQ(p->total_steps, 10000);
  EXPECT_EQ(p->time, "2026-12-04T20:00:00Z");
  ASSERT_EQ(p->metrics.size(), 2u);
  EXPECT_EQ(p->metrics[0], (std::pair<std::string, std::string>("loss", "0.3125")));
  EXPECT_EQ(p->metrics[1], (std::pair<std::string, std::string>("tokens/s", "51200")));
  EXPECT_EQ(api::ProgressSummary(*p), "1234/10000 (12%)");
}

TEST(ParseProgressAnnotation, RefusesWhatIsNoReport) {
  for (const char* bad : {"", "not json", "[]", R"({"attempt":1,"time":"2026-12-04T20:00:00Z"})",
                          R"({"attempt":1,"step":-1,"time":"2026-12-04T20:00:00Z"})",
                          R"({"attempt":1,"step":1.5,"time":"2026-12-04T20:00:00Z"})",
                          R"({"attempt":0,"step":1,"time":"2026-12-04T20:00:00Z"})", R"({"attempt":1,"step":1})",
                          R"({"attempt":1,"step":1,"time":"yesterday"})", R"({"attempt":"1","step":1,"time":"2026-12-04T20:00:00Z"})"}) {
    EXPECT_FALSE(ParseProgressAnnotation(bad).has_value()) << bad;
  }
}

TEST(ParseProgressAnnotation, DropsABadTotalAndBadOrSurplusMetrics) {
  auto p = ParseProgressAnnotation(R"({"attempt":1,"step":5,"total":0,"time":"2026-12-04T20:00:00Z","metrics":{
      "a":1,"b":2,"c":3,"bad name":4,"d":"text","e":5,"f":6,"g":7,"h":8,"i":9,
      "a_name_that_is_longer_than_thirty_two":1}})");
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->total_steps.has_value());
  EXPECT_EQ(api::ProgressSummary(*p), "5");
  ASSERT_EQ(p->metrics.size(), 8u);
  for (const auto& [name, value] : p->metrics) {
    EXPECT_NE(name, "bad name");
    EXPECT_NE(name, "d");
  }
}

TEST(ProgressPercent, IsCappedAndNeedsATotal) {
  api::Progress p;
  p.step = 150;
  p.total_steps = 100;
  EXPECT_EQ(api::ProgressPercent(p), 100);
  p.total_steps.reset();
  EXPECT_EQ(api::ProgressPercent(p), 0);
}

TEST(IsNewerProgress, ALaterAttemptOrTimeWinsAndAnOldReportNever) {
  auto shown = ParseProgressAnnotation(R"({"attempt":2,"step":100,"time":"2026-12-04T20:00:10Z"})");
  auto later = ParseProgressAnnotation(R"({"attempt":2,"step":105,"time":"2026-12-04T20:00:15Z"})");
  auto older = ParseProgressAnnotation(R"({"attempt":2,"step":95,"time":"2026-12-04T20:00:05Z"})");
  auto next_attempt = ParseProgressAnnotation(R"({"attempt":3,"step":40,"time":"2026-12-04T20:00:01Z"})");
  auto old_attempt = ParseProgressAnnotation(R"({"attempt":1,"step":400,"time":"2026-12-04T20:01:00Z"})");
  EXPECT_TRUE(IsNewerProgress(*shown, std::nullopt));
  EXPECT_TRUE(IsNewerProgress(*later, shown));
  EXPECT_FALSE(IsNewerProgress(*older, shown));
  EXPECT_FALSE(IsNewerProgress(*shown, shown)) << "the same report writes nothing";
  EXPECT_TRUE(IsNewerProgress(*next_attempt, shown));
  EXPECT_FALSE(IsNewerProgress(*old_attempt, shown));
}

TEST(ProgressStatus, RoundTripsThroughTheStatusJson) {
  auto p = ParseProgressAnnotation(R"({"attempt":1,"step":7,"total":10,"time":"2026-12-04T20:00:00Z","metrics":{"loss":0.5}})");
  nlohmann::json j = api::ProgressToJson(*p);
  EXPECT_EQ(j["summary"], "7/10 (70%)");
  EXPECT_EQ(j["percent"], 70);
  EXPECT_EQ(api::ParseProgressStatus(j), p);
}

}  // namespace
}  // namespace ncclop::observed
