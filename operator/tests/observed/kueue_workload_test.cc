#include "observed/kueue_workload.h"

#include <gtest/gtest.h>

#include "test_workloads.h"

namespace ncclop::observed {
namespace {

using Json = nlohmann::json;
using testing::Admitted;
using testing::Pending;

TEST(ObserveKueueWorkload, AdmittedPendingEvictedFinished) {
  EXPECT_FALSE(ObserveKueueWorkload(Json()).exists);
  ObservedKueueWorkload admitted = Admitted();
  EXPECT_TRUE(admitted.exists);
  EXPECT_TRUE(admitted.admitted);
  EXPECT_EQ(admitted.cluster_queue, "gpus");
  ObservedKueueWorkload pending = Pending();
  EXPECT_FALSE(pending.admitted);
  EXPECT_NE(pending.waiting.find("insufficient unused quota"), std::string::npos);
  ObservedKueueWorkload evicted = ObserveKueueWorkload(Json::parse(R"({"status":{"conditions":[
      {"type":"Admitted","status":"True"},{"type":"Evicted","status":"True","reason":"Preempted","message":"by a job of higher priority"}]}})"));
  EXPECT_FALSE(evicted.admitted) << "an evicted Workload must stop its pods";
  EXPECT_EQ(evicted.eviction, "Preempted: by a job of higher priority");
  EXPECT_TRUE(ObserveKueueWorkload(Json::parse(R"({"status":{"conditions":[{"type":"Finished","status":"True"}]}})")).finished);
}

TEST(ObserveKueueWorkload, ReadsThePodsReadyCondition) {
  ObservedKueueWorkload wl = ObserveKueueWorkload(Json::parse(R"({"status":{"conditions":[
      {"type":"Admitted","status":"True"},{"type":"PodsReady","status":"False","reason":"WaitForRecovery"}]}})"));
  EXPECT_EQ(wl.pods_ready_status, "False");
  EXPECT_EQ(wl.pods_ready_reason, "WaitForRecovery");
  EXPECT_EQ(Admitted().pods_ready_status, "") << "no condition: none read";
}

TEST(ObserveKueueWorkload, ReadsWhetherTheAdmissionHasATopology) {
  EXPECT_FALSE(Admitted().topology_assigned);
  ObservedKueueWorkload wl = ObserveKueueWorkload(Json::parse(R"({"status":{"admission":{"clusterQueue":"gpus",
      "podSetAssignments":[{"name":"trainers","count":8,"flavors":{"cpu":"tas"},
        "topologyAssignment":{"levels":["kubernetes.io/hostname"],"slices":[{"domainCount":8,
          "valuesPerLevel":[{"individual":{"prefix":"node-","roots":["1","2","3","4","5","6","7","8"]}}],
          "podCounts":{"universal":1}}]}}]},
      "conditions":[{"type":"QuotaReserved","status":"True"},{"type":"Admitted","status":"True"}]}})"));
  EXPECT_TRUE(wl.topology_assigned);
  EXPECT_EQ(wl.flavors, std::vector<std::string>{"tas"});
}

}  // namespace
}  // namespace ncclop::observed
