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
  for (GangApi served : kGangApis) EXPECT_TRUE(UsesGangScheduling(plain, served));
  EXPECT_FALSE(UsesGangScheduling(plain, GangApi::kNone));
  EXPECT_TRUE(UsesGangScheduling(JobWithGang("Required"), GangApi::kNone));
  EXPECT_FALSE(UsesGangScheduling(JobWithGang("Disabled"), GangApi::kV1beta1));
}

TEST(Gang, VersionsNewestFirstAndWhichHavePodGroups) {
  ASSERT_EQ(std::size(kGangApis), 3u);
  EXPECT_EQ(GangApiVersion(kGangApis[0]), "v1beta1");
  EXPECT_EQ(GangApiVersion(kGangApis[1]), "v1alpha2");
  EXPECT_EQ(GangApiVersion(kGangApis[2]), "v1alpha1");
  EXPECT_EQ(GangApiVersion(GangApi::kNone), "");
  EXPECT_TRUE(GangHasPodGroups(GangApi::kV1beta1));
  EXPECT_TRUE(GangHasPodGroups(GangApi::kV1alpha2));
  EXPECT_FALSE(GangHasPodGroups(GangApi::kV1alpha1));
  EXPECT_FALSE(GangHasPodGroups(GangApi::kNone));
}

void ExpectOwnedByTheJob(const Json& object, const char* name) {
  EXPECT_EQ(object["metadata"]["name"], name);
  EXPECT_EQ(object["metadata"]["namespace"], "ml");
  EXPECT_EQ(object["metadata"]["labels"]["nccl.dev/job-name"], "demo");
  EXPECT_EQ(object["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(object["metadata"]["ownerReferences"][0]["controller"], true);
}

const Json kControllerRef = {{"apiGroup", "nccl.dev"}, {"kind", "NcclJob"}, {"name", "demo"}};
const Json kGangOf4 = {{"gang", {{"minCount", 4}}}};

// 1.35: scheduling.k8s.io/v1alpha1 (api v0.35 scheduling/v1alpha1/types.go).
TEST(GangV1alpha1, WorkloadHasOnePodGroupOfReplicasAndPodsAreReplicasOfIt) {
  const api::NcclJob job = testing::Job(4, 1);
  const Json w = GangWorkload(GangApi::kV1alpha1, job);
  EXPECT_EQ(w["apiVersion"], "scheduling.k8s.io/v1alpha1");
  EXPECT_EQ(w["kind"], "Workload");
  ExpectOwnedByTheJob(w, "demo");
  EXPECT_EQ(w["spec"], Json({{"controllerRef", kControllerRef},
                             {"podGroups", Json::array({{{"name", "trainers"}, {"policy", kGangOf4}}})}}));
  Json pod = Pod(job, 2, 3, PodOptions{});
  EXPECT_FALSE(pod["spec"].contains("workloadRef"));
  JoinGang(GangApi::kV1alpha1, pod, job, 3);
  EXPECT_EQ(pod["spec"]["workloadRef"],
            Json({{"name", "demo"}, {"podGroup", "trainers"}, {"podGroupReplicaKey", "attempt-3"}}));
  EXPECT_FALSE(pod["spec"].contains("schedulingGroup"));
}

// 1.36: scheduling.k8s.io/v1alpha2 (api v0.36 scheduling/v1alpha2/types.go).
TEST(GangV1alpha2, WorkloadHasATemplateEachAttemptAPodGroupAndPodsJoinIt) {
  const api::NcclJob job = testing::Job(4, 1);
  const Json w = GangWorkload(GangApi::kV1alpha2, job);
  EXPECT_EQ(w["apiVersion"], "scheduling.k8s.io/v1alpha2");
  ExpectOwnedByTheJob(w, "demo");
  EXPECT_EQ(w["spec"], Json({{"controllerRef", kControllerRef},
                             {"podGroupTemplates", Json::array({{{"name", "trainers"}, {"schedulingPolicy", kGangOf4}}})}}));
  const Json g = GangPodGroup(GangApi::kV1alpha2, job, 3);
  EXPECT_EQ(g["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(g["kind"], "PodGroup");
  ExpectOwnedByTheJob(g, "demo-attempt-3");
  EXPECT_EQ(g["metadata"]["labels"]["nccl.dev/attempt"], "3");
  EXPECT_EQ(g["spec"], Json({{"podGroupTemplateRef",
                              {{"workload", {{"workloadName", "demo"}, {"podGroupTemplateName", "trainers"}}}}},
                             {"schedulingPolicy", kGangOf4}}));
  Json pod = Pod(job, 2, 3, PodOptions{});
  JoinGang(GangApi::kV1alpha2, pod, job, 3);
  EXPECT_EQ(pod["spec"]["schedulingGroup"], Json({{"podGroupName", "demo-attempt-3"}}));
  EXPECT_FALSE(pod["spec"].contains("workloadRef"));
}

// 1.37: scheduling.k8s.io/v1beta1 (api v0.37 scheduling/v1beta1/types.go): the PodGroup names its
// template by spec.workloadRef{workloadName, templateName}.
TEST(GangV1beta1, WorkloadHasATemplateEachAttemptAPodGroupAndPodsJoinIt) {
  const api::NcclJob job = testing::Job(4, 1);
  const Json w = GangWorkload(GangApi::kV1beta1, job);
  EXPECT_EQ(w["apiVersion"], "scheduling.k8s.io/v1beta1");
  EXPECT_EQ(w["spec"], Json({{"controllerRef", kControllerRef},
                             {"podGroupTemplates", Json::array({{{"name", "trainers"}, {"schedulingPolicy", kGangOf4}}})}}));
  const Json g = GangPodGroup(GangApi::kV1beta1, job, 1);
  EXPECT_EQ(g["apiVersion"], "scheduling.k8s.io/v1beta1");
  ExpectOwnedByTheJob(g, "demo-attempt-1");
  EXPECT_EQ(g["spec"], Json({{"workloadRef", {{"workloadName", "demo"}, {"templateName", "trainers"}}},
                             {"schedulingPolicy", kGangOf4}}));
  Json pod = Pod(job, 0, 1, PodOptions{});
  JoinGang(GangApi::kV1beta1, pod, job, 1);
  EXPECT_EQ(pod["spec"]["schedulingGroup"], Json({{"podGroupName", "demo-attempt-1"}}));
}

TEST(Gang, ALeftoverWorkloadFitsOnlyWithTheSameGangInTheSameVersion) {
  const api::NcclJob job = testing::Job(4, 1);
  for (GangApi api : kGangApis) {
    SCOPED_TRACE(GangApiVersion(api));
    Json existing = GangWorkload(api, job);
    existing["metadata"]["uid"] = "w-1";
    EXPECT_TRUE(GangWorkloadFits(api, existing, job));
    EXPECT_FALSE(GangWorkloadFits(api, GangWorkload(api, testing::Job(8, 1)), job));
    EXPECT_FALSE(GangWorkloadFits(api, Json::object(), job));
    Json basic = existing;
    Json& group = basic["spec"][api == GangApi::kV1alpha1 ? "podGroups" : "podGroupTemplates"][0];
    group[api == GangApi::kV1alpha1 ? "policy" : "schedulingPolicy"] = {{"basic", Json::object()}};
    EXPECT_FALSE(GangWorkloadFits(api, basic, job));
    Json renamed = existing;
    renamed["spec"][api == GangApi::kV1alpha1 ? "podGroups" : "podGroupTemplates"][0]["name"] = "other";
    EXPECT_FALSE(GangWorkloadFits(api, renamed, job));
  }
  // A template-shaped Workload does not fit v1alpha1, nor the other way round.
  EXPECT_FALSE(GangWorkloadFits(GangApi::kV1alpha1, GangWorkload(GangApi::kV1beta1, job), job));
  EXPECT_FALSE(GangWorkloadFits(GangApi::kV1beta1, GangWorkload(GangApi::kV1alpha1, job), job));
}

TEST(Gang, ALeftoverPodGroupFitsOnlyWithTheJobsTemplateAndGang) {
  const api::NcclJob job = testing::Job(4, 1);
  for (GangApi api : {GangApi::kV1alpha2, GangApi::kV1beta1}) {
    SCOPED_TRACE(GangApiVersion(api));
    EXPECT_TRUE(GangPodGroupFits(api, GangPodGroup(api, job, 2), job));
    EXPECT_FALSE(GangPodGroupFits(api, GangPodGroup(api, testing::Job(8, 1), 2), job));
    EXPECT_FALSE(GangPodGroupFits(api, Json::object(), job));
    Json basic = GangPodGroup(api, job, 2);
    basic["spec"]["schedulingPolicy"] = {{"basic", Json::object()}};
    EXPECT_FALSE(GangPodGroupFits(api, basic, job));
  }
  Json other_workload = GangPodGroup(GangApi::kV1beta1, job, 2);
  other_workload["spec"]["workloadRef"]["workloadName"] = "someone-else";
  EXPECT_FALSE(GangPodGroupFits(GangApi::kV1beta1, other_workload, job));
  EXPECT_FALSE(GangPodGroupFits(GangApi::kV1beta1, GangPodGroup(GangApi::kV1alpha2, job, 2), job));
}

api::NcclJob JobWithTopologyKey(const char* key) {
  Json object = testing::JobJson(4, 1);
  object["spec"]["gangTopologyKey"] = key;
  auto job = api::ParseNcclJob(object);
  EXPECT_TRUE(job.ok());
  EXPECT_EQ(job->spec_error, "");
  return *job;
}

// scheduling/v1beta1 PodGroupTemplate and PodGroupSpec .schedulingConstraints.topology[].key (api v0.37).
TEST(Gang, TheTopologyKeyConstrainsTheTemplateAndEachAttemptsPodGroup) {
  const api::NcclJob job = JobWithTopologyKey("example.com/rack");
  const Json constraints = Json::parse(R"({"topology":[{"key":"example.com/rack"}]})");
  for (GangApi api : {GangApi::kV1beta1, GangApi::kV1alpha2}) {
    SCOPED_TRACE(GangApiVersion(api));
    const Json w = GangWorkload(api, job);
    EXPECT_EQ(w["spec"]["podGroupTemplates"][0]["schedulingConstraints"], constraints);
    EXPECT_EQ(GangPodGroup(api, job, 2)["spec"]["schedulingConstraints"], constraints) << "copied into each attempt's group";
    EXPECT_TRUE(GangWorkloadFits(api, w, job));
    EXPECT_TRUE(GangPodGroupFits(api, GangPodGroup(api, job, 2), job));
    EXPECT_TRUE(GangWorkloadKeptConstraints(api, w, job));
    Json dropped = w;  // what an API server with TopologyAwareWorkloadScheduling off returns
    dropped["spec"]["podGroupTemplates"][0].erase("schedulingConstraints");
    EXPECT_FALSE(GangWorkloadKeptConstraints(api, dropped, job));
    EXPECT_FALSE(GangWorkloadFits(api, dropped, job)) << "a leftover without the constraint is made again";
    EXPECT_FALSE(GangPodGroupFits(api, GangPodGroup(api, testing::Job(4, 1), 2), job));
    EXPECT_FALSE(GangWorkloadFits(api, w, testing::Job(4, 1))) << "nor one with a constraint for a job without";
    EXPECT_TRUE(GangWorkloadKeptConstraints(api, dropped, testing::Job(4, 1))) << "nothing asked, nothing to keep";
  }
  EXPECT_FALSE(GangWorkload(GangApi::kV1beta1, testing::Job(4, 1))["spec"]["podGroupTemplates"][0].contains("schedulingConstraints"));
  EXPECT_FALSE(GangWorkload(GangApi::kV1alpha1, job)["spec"]["podGroups"][0].contains("schedulingConstraints"))
      << "1.35's pod groups have none (the reconciler fails such a job)";
}

TEST(Gang, TheTopologyKeyIsALabelKeyAndNeedsAGang) {
  Json object = testing::JobJson(4, 1);
  object["spec"]["gangTopologyKey"] = "Example.com/rack";
  EXPECT_NE(api::ParseNcclJob(object)->spec_error.find("spec.gangTopologyKey must be a node label key"), std::string::npos);
  object["spec"]["gangTopologyKey"] = "example.com/rack";
  object["spec"]["gangScheduling"] = "Disabled";
  EXPECT_EQ(api::ParseNcclJob(object)->spec_error, "spec.gangTopologyKey needs gang scheduling: spec.gangScheduling is Disabled");
}

TEST(Gang, PodGroupNamesAreDnsSubdomainsForTheLongestJobName) {
  Json object = testing::JobJson(4, 1);
  object["metadata"]["name"] = std::string(63, 'j');
  auto job = api::ParseNcclJob(object);
  ASSERT_TRUE(job.ok());
  const std::string name = GangPodGroup(GangApi::kV1beta1, *job, 123456)["metadata"]["name"];
  EXPECT_EQ(name, std::string(63, 'j') + "-attempt-123456");
  EXPECT_LE(name.size(), 253u);
}

}  // namespace
}  // namespace ncclop::desired
