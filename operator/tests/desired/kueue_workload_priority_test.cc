// The Kueue Workload's priority: where it comes from, in Kueue's order.
#include <gtest/gtest.h>

#include "desired/kueue_workload.h"
#include "desired/kueue_workload_priority.h"
#include "test_jobs.h"

namespace ncclop::desired {
namespace {

using Json = nlohmann::json;
using Kind = PriorityClassToRead::Kind;

api::NcclJob JobWith(const char* label, const char* pod_priority_class) {
  Json object = testing::JobJson();
  if (label != nullptr) object["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = label;
  if (pod_priority_class != nullptr) object["spec"]["template"]["spec"]["priorityClassName"] = pod_priority_class;
  return *api::ParseNcclJob(object);
}

Json PriorityClass(const char* name, int value, bool global_default = false) {
  return {{"metadata", {{"name", name}}}, {"value", value}, {"globalDefault", global_default}};
}

TEST(KueueWorkloadPriority, TheLabelsWorkloadPriorityClassComesFirst) {
  const PriorityClassToRead what = PriorityClassOf(JobWith("high", "pods-low"));
  EXPECT_EQ(what.kind, Kind::kWorkloadPriorityClass);
  EXPECT_EQ(what.name, "high");
  const KueueWorkloadPriority p = PriorityFrom(what, {Json{{"metadata", {{"name", "high"}}}, {"value", 10000}}});
  EXPECT_EQ(p.priority, 10000);
  EXPECT_EQ(p.class_ref, Json::parse(R"({"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"high"})"));
}

TEST(KueueWorkloadPriority, ElseThePodTemplatesPriorityClass) {
  const PriorityClassToRead what = PriorityClassOf(JobWith(nullptr, "pods-low"));
  EXPECT_EQ(what.kind, Kind::kPriorityClass);
  EXPECT_EQ(what.name, "pods-low");
  const KueueWorkloadPriority p = PriorityFrom(what, {PriorityClass("pods-low", -5)});
  EXPECT_EQ(p.priority, -5);
  EXPECT_EQ(p.class_ref, Json::parse(R"({"group":"scheduling.k8s.io","kind":"PriorityClass","name":"pods-low"})"));
}

TEST(KueueWorkloadPriority, ElseTheLowestGlobalDefaultElseZero) {
  const PriorityClassToRead what = PriorityClassOf(JobWith(nullptr, nullptr));
  EXPECT_EQ(what.kind, Kind::kDefault);
  const KueueWorkloadPriority p = PriorityFrom(what, {PriorityClass("a", 100, true), PriorityClass("b", 5000), PriorityClass("c", 50, true)});
  EXPECT_EQ(p.priority, 50) << "two global defaults (a race between admins): the lower, as Kueue picks";
  EXPECT_EQ(p.class_ref["name"], "c");
  const KueueWorkloadPriority none = PriorityFrom(what, {PriorityClass("b", 5000)});
  EXPECT_EQ(none.priority, 0);
  EXPECT_TRUE(none.class_ref.is_null());
}

TEST(KueueWorkloadPriority, OnTheWorkloadSpec) {
  Json wl = KueueWorkload(JobWith("high", nullptr), {});
  SetPriority(wl, {Json::parse(R"({"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"high"})"), 10000});
  EXPECT_EQ(wl["spec"]["priority"], 10000);
  EXPECT_EQ(wl["spec"]["priorityClassRef"]["name"], "high");
  SetPriority(wl, {});
  EXPECT_EQ(wl["spec"]["priority"], 0);
  EXPECT_FALSE(wl["spec"].contains("priorityClassRef")) << "no class: Kueue's validation wants no ref, a priority is fine";
}

TEST(KueueWorkloadPriority, AChangedLabelIsFollowedAsKueueDoes) {
  const Json from_wpc = Json::parse(R"({"metadata":{"resourceVersion":"7"},"spec":{"priority":10,
      "priorityClassRef":{"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"low"}}})");
  EXPECT_EQ(WorkloadPriorityClassToFollow(JobWith("high", nullptr), from_wpc, true), "high")
      << "a WorkloadPriorityClass may change even while the Workload holds quota (it may preempt then)";
  EXPECT_EQ(WorkloadPriorityClassToFollow(JobWith("low", nullptr), from_wpc, false), std::nullopt) << "unchanged";
  EXPECT_EQ(WorkloadPriorityClassToFollow(JobWith(nullptr, nullptr), from_wpc, false), std::nullopt)
      << "a label taken away leaves the priority it gave";

  const Json from_pc = Json::parse(R"({"spec":{"priority":5,
      "priorityClassRef":{"group":"scheduling.k8s.io","kind":"PriorityClass","name":"pods"}}})");
  EXPECT_EQ(WorkloadPriorityClassToFollow(JobWith("high", "pods"), from_pc, false), std::nullopt)
      << "a priority from the pods' PriorityClass stays, as in Kueue";

  const Json none = Json::parse(R"({"spec":{"priority":0}})");
  EXPECT_EQ(WorkloadPriorityClassToFollow(JobWith("high", nullptr), none, false), "high");
  EXPECT_EQ(WorkloadPriorityClassToFollow(JobWith("high", nullptr), none, true), std::nullopt)
      << "Kueue refuses a class added while quota is reserved";

  EXPECT_EQ(SetPriorityPatch(from_wpc, {Json::parse(R"({"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"high"})"), 1000}),
            Json::parse(R"({"metadata":{"resourceVersion":"7"},"spec":{"priority":1000,
                "priorityClassRef":{"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"high"}}})"));
}

}  // namespace
}  // namespace ncclop::desired
