// DisruptionOf: which pod ends are disruptions (preemption, eviction, a lost node), which restart
// the attempt without using a restart (policy/decide_disruption_test.cc).
#include "observed/disruption.h"

#include <gtest/gtest.h>

namespace ncclop::observed {
namespace {

using Json = nlohmann::json;

Json Status(const char* text) { return Json::parse(text); }

TEST(DisruptionOf, TheDisruptionTargetConditionSaysWhoEndedThePod) {
  auto evicted = DisruptionOf(Status(R"({"phase":"Running","conditions":[
      {"type":"Ready","status":"True"},
      {"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI"}]})"));
  ASSERT_TRUE(evicted);
  EXPECT_EQ(evicted->kind, "Eviction");
  EXPECT_NE(evicted->account.find("Eviction API"), std::string::npos);
  EXPECT_NE(evicted->account.find("(EvictionByEvictionAPI)"), std::string::npos);

  auto preempted = DisruptionOf(Status(R"({"conditions":[{"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler"}]})"));
  ASSERT_TRUE(preempted);
  EXPECT_EQ(preempted->kind, "Preemption");

  auto node_gone = DisruptionOf(Status(R"({"conditions":[{"type":"DisruptionTarget","status":"True","reason":"DeletionByPodGC"}]})"));
  ASSERT_TRUE(node_gone);
  EXPECT_EQ(node_gone->kind, "NodeLost");

  auto unknown = DisruptionOf(Status(R"({"conditions":[{"type":"DisruptionTarget","status":"True","reason":"SomethingNew"}]})"));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->kind, "Disruption");
  EXPECT_EQ(unknown->account, "disrupted (SomethingNew)");
}

TEST(DisruptionOf, TheKubeletsReasonsOnAFailedPod) {
  auto pressure = DisruptionOf(Status(R"({"phase":"Failed","reason":"Evicted","message":"low on memory"})"));
  ASSERT_TRUE(pressure);
  EXPECT_EQ(pressure->kind, "NodePressure");
  auto shutdown = DisruptionOf(Status(R"({"phase":"Failed","reason":"Terminated"})"));
  ASSERT_TRUE(shutdown);
  EXPECT_EQ(shutdown->kind, "NodeShutdown");
  EXPECT_FALSE(DisruptionOf(Status(R"({"phase":"Running","reason":"Evicted"})"))) << "only a Failed pod carries them";
}

TEST(DisruptionOf, ACrashOrAFalseConditionIsNoDisruption) {
  EXPECT_FALSE(DisruptionOf(Status(R"({"phase":"Failed","reason":"Error"})")));
  EXPECT_FALSE(DisruptionOf(Status(R"({"phase":"Failed","conditions":[{"type":"DisruptionTarget","status":"False"}]})")));
  EXPECT_FALSE(DisruptionOf(Status(R"({})")));
  EXPECT_FALSE(DisruptionOf(Json()));
}

}  // namespace
}  // namespace ncclop::observed
