#include "desired/gang_workload.h"

#include <gtest/gtest.h>

#include "desired/pod.h"
#include "test_jobs.h"

namespace ncclop::desired {
namespace {

api::NcclJob JobWithGang(const char* value) {
  Json object = testing::JobJson(4, 1);
  object["spec"]["gangScheduling"] = value;
  auto job = api::ParseNcclJob(object);
  EXPECT_TRUE(job.ok());
  return *job;
}

TEST(Gang, AutoFollowsTheApiServerRequiredAndDisabledDoNot) {
  const api::NcclJob plain = testing::Job();  // no field: Auto
  EXPECT_EQ(plain.spec.gang_scheduling, api::GangScheduling::kAuto);
  EXPECT_TRUE(UsesGangScheduling(plain, true));
  EXPECT_FALSE(UsesGangScheduling(plain, false));
  EXPECT_TRUE(UsesGangScheduling(JobWithGang("Required"), false));
  EXPECT_FALSE(UsesGangScheduling(JobWithGang("Disabled"), true));
}

TEST(Gang, WorkloadHasOneGangOfReplicasOwnedByTheJob) {
  const Json w = GangWorkload(testing::Job(4, 1));
  EXPECT_EQ(w["apiVersion"], "scheduling.k8s.io/v1alpha1");
  EXPECT_EQ(w["kind"], "Workload");
  EXPECT_EQ(w["metadata"]["name"], "demo");
  EXPECT_EQ(w["metadata"]["namespace"], "ml");
  EXPECT_EQ(w["metadata"]["labels"]["nccl.dev/job-name"], "demo");
  EXPECT_EQ(w["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(w["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(w["spec"]["controllerRef"], Json({{"apiGroup", "nccl.dev"}, {"kind", "NcclJob"}, {"name", "demo"}}));
  ASSERT_EQ(w["spec"]["podGroups"].size(), 1u);
  EXPECT_EQ(w["spec"]["podGroups"][0]["name"], "trainers");
  EXPECT_EQ(w["spec"]["podGroups"][0]["policy"], Json({{"gang", {{"minCount", 4}}}}));
}

TEST(Gang, ALeftoverFitsOnlyWithTheSameGang) {
  const api::NcclJob job = testing::Job(4, 1);
  Json existing = GangWorkload(job);
  existing["metadata"]["uid"] = "w-1";
  EXPECT_TRUE(GangWorkloadFits(existing, job));
  EXPECT_FALSE(GangWorkloadFits(GangWorkload(testing::Job(8, 1)), job));
  existing["spec"]["podGroups"][0]["policy"] = {{"basic", Json::object()}};
  EXPECT_FALSE(GangWorkloadFits(existing, job));
  EXPECT_FALSE(GangWorkloadFits(Json::object(), job));
}

TEST(Gang, EveryPodOfAnAttemptIsOneReplicaOfThePodGroup) {
  const api::NcclJob job = testing::Job(4, 1);
  Json pod = Pod(job, 2, 3, PodOptions{});
  EXPECT_FALSE(pod["spec"].contains("workloadRef"));
  ReferenceGangWorkload(pod, job, 3);
  EXPECT_EQ(pod["spec"]["workloadRef"],
            Json({{"name", "demo"}, {"podGroup", "trainers"}, {"podGroupReplicaKey", "attempt-3"}}));
}

}  // namespace
}  // namespace ncclop::desired
