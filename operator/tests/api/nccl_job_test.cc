#include "api/nccl_job.h"

#include <gtest/gtest.h>

#include "test_jobs.h"

namespace ncclop::api {
namespace {

using Json = nlohmann::json;

TEST(ParseSpec, AppliesDefaults) {
  auto spec = ParseSpec(Json::parse(R"({"template":{"spec":{"containers":[{"name":"t","image":"i"}]}}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->replicas, 1);
  EXPECT_EQ(spec->gpus_per_pod, 1);
  EXPECT_EQ(spec->init_timeout_seconds, 300);
  EXPECT_EQ(spec->failure_policy.max_restarts, 3);
  EXPECT_EQ(spec->failure_policy.backoff_seconds, 10);
  EXPECT_FALSE(spec->suspend);
  EXPECT_FALSE(spec->ttl_seconds_after_finished.has_value());
  EXPECT_EQ(spec->trainer_container, "t");
}

TEST(ParseSpec, WorldSizeCountsCpuOnlyPodsAsOneRank) {
  NcclJobSpec s;
  s.replicas = 3;
  s.gpus_per_pod = 0;
  EXPECT_EQ(s.WorldSize(), 3);
  s.gpus_per_pod = 8;
  EXPECT_EQ(s.WorldSize(), 24);
}

struct BadSpec {
  const char* json;
  const char* expected_fragment;
};

class ParseSpecRejects : public ::testing::TestWithParam<BadSpec> {};

TEST_P(ParseSpecRejects, WithAMessageNamingTheField) {
  auto spec = ParseSpec(Json::parse(GetParam().json));
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find(GetParam().expected_fragment), std::string::npos) << spec.status().message();
  EXPECT_EQ(spec.status().reason(), "InvalidSpec");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseSpecRejects,
    ::testing::Values(
        BadSpec{R"({})", "spec.template is required"},
        BadSpec{R"({"template":{"spec":{"containers":[]}}})", "at least one container"},
        BadSpec{R"({"replicas":0,"template":{"spec":{"containers":[{"name":"t"}]}}})", "spec.replicas must be between 1"},
        BadSpec{R"({"gpusPerPod":-1,"template":{"spec":{"containers":[{"name":"t"}]}}})", "spec.gpusPerPod"},
        BadSpec{R"({"replicas":"4","template":{"spec":{"containers":[{"name":"t"}]}}})", "must be an integer"},
        BadSpec{R"({"failurePolicy":{"maxRestarts":-2},"template":{"spec":{"containers":[{"name":"t"}]}}})", "maxRestarts"},
        BadSpec{R"({"failurePolicy":{"failFastExitCodes":[0]},"template":{"spec":{"containers":[{"name":"t"}]}}})", "exit codes 1..255"},
        BadSpec{R"({"template":{"spec":{"containers":[{"name":"nccl-sidecar"}]}}})", "reserved"},
        BadSpec{R"({"template":{"spec":{"restartPolicy":"Always","containers":[{"name":"t"}]}}})", "must be Never"},
        BadSpec{R"({"template":{"metadata":{"annotations":{"nccl.dev/trainer-container":"x"}},"spec":{"containers":[{"name":"t"}]}}})",
                "not in template.spec.containers"},
        BadSpec{R"({"replicas":2,"network":{"bootstrapRoots":3},"template":{"spec":{"containers":[{"name":"t"}]}}})",
                "spec.network.bootstrapRoots must be at most replicas (2)"},
        BadSpec{R"({"network":{"bootstrapRoots":0},"template":{"spec":{"containers":[{"name":"t"}]}}})",
                "spec.network.bootstrapRoots must be between 1"},
        BadSpec{R"({"shmSize":"8 GB","template":{"spec":{"containers":[{"name":"t"}]}}})",
                "spec.shmSize must be a Kubernetes quantity like 8Gi or 0, got 8 GB"},
        BadSpec{R"({"shmSize":-1,"template":{"spec":{"containers":[{"name":"t"}]}}})", "spec.shmSize must be"},
        BadSpec{R"({"computeDomain":"yes","template":{"spec":{"containers":[{"name":"t"}]}}})",
                "spec.computeDomain must be an object"},
        BadSpec{R"({"computeDomain":{},"template":{"spec":{"resourceClaims":[{"name":"compute-domain-channel"}],
                  "containers":[{"name":"t"}]}}})", "must not name a claim compute-domain-channel"},
        BadSpec{R"({"computeDomain":{},"template":{"spec":{"containers":[{"name":"t",
                  "resources":{"claims":[{"name":"compute-domain-channel"}]}}]}}})", "must not name a claim compute-domain-channel"}));

TEST(ParseSpec, BootstrapRootsDefaultToOneAndAreReadWhenSet) {
  auto spec = ParseSpec(Json::parse(R"({"template":{"spec":{"containers":[{"name":"t"}]}}})"));
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->bootstrap_roots, 1);
  EXPECT_FALSE(spec->bootstrap_roots_set);
  spec = ParseSpec(Json::parse(R"({"replicas":8,"network":{"bootstrapRoots":4},"template":{"spec":{"containers":[{"name":"t"}]}}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->bootstrap_roots, 4);
  EXPECT_TRUE(spec->bootstrap_roots_set);
}

TEST(ParseSpec, ShmSizeIsAQuantityStringOrAWholeNumber) {
  auto spec = ParseSpec(Json::parse(R"({"template":{"spec":{"containers":[{"name":"t"}]}}})"));
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->shm_size, "8Gi");
  for (const auto& [given, read] : std::vector<std::pair<Json, std::string>>{{"16Gi", "16Gi"}, {0, "0"}, {"1.5G", "1.5G"},
                                                                             {1073741824, "1073741824"}}) {
    Json s = Json::parse(R"({"template":{"spec":{"containers":[{"name":"t"}]}}})");
    s["shmSize"] = given;
    auto parsed = ParseSpec(s);
    ASSERT_TRUE(parsed.ok()) << given.dump() << ": " << parsed.status().message();
    EXPECT_EQ(parsed->shm_size, read);
  }
}

TEST(ParseSpec, ComputeDomainIsRequestedByNamingIt) {
  auto spec = ParseSpec(Json::parse(R"({"template":{"spec":{"containers":[{"name":"t"}]}}})"));
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->compute_domain.requested);
  spec = ParseSpec(Json::parse(R"({"computeDomain":{},"template":{"spec":{"containers":[{"name":"t"}]}}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_TRUE(spec->compute_domain.requested);
  EXPECT_EQ(spec->compute_domain.num_nodes, 0);
  EXPECT_EQ(spec->compute_domain.allocation_mode, "Single");
  // Another claim of the template's is no clash; a claim of that name by another container neither.
  spec = ParseSpec(Json::parse(R"({"computeDomain":{"numNodes":18,"allocationMode":"All"},"template":{"spec":{
      "resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"g"}],
      "containers":[{"name":"t","resources":{"claims":[{"name":"gpus"}]}},
                    {"name":"side","resources":{"claims":[{"name":"compute-domain-channel"}]}}]}}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->compute_domain.num_nodes, 18);
  EXPECT_EQ(spec->compute_domain.allocation_mode, "All");
}

TEST(ParseSpec, TrainerAnnotationPicksAnotherContainer) {
  auto spec = ParseSpec(Json::parse(
      R"({"template":{"metadata":{"annotations":{"nccl.dev/trainer-container":"b"}},"spec":{"containers":[{"name":"a"},{"name":"b"}]}}})"));
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->trainer_container, "b");
}

TEST(ParseNcclJob, KeepsTheJobWhenTheSpecIsBadSoItCanBeMarkedFailed) {
  Json j = testing::JobJson();
  j["spec"]["replicas"] = 0;
  auto job = ParseNcclJob(j);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->name, "demo");
  EXPECT_NE(job->spec_error.find("replicas"), std::string::npos);
}

TEST(ParseNcclJob, RejectsMissingMetadata) {
  EXPECT_FALSE(ParseNcclJob(Json::parse(R"({"spec":{}})")).ok());
  EXPECT_FALSE(ParseNcclJob(Json::parse(R"({"metadata":{"name":"a"}})")).ok());
}

TEST(Status, RoundTripsThroughJson) {
  NcclJobStatus s;
  s.observed_generation = 3;
  s.state = "Running";
  s.attempt = 2;
  s.restarts = 1;
  s.ready = 4;
  s.active = 4;
  s.start_time = "2024-01-01T00:00:00Z";
  s.id_published_time = "2024-01-01T00:00:05Z";
  s.pod_shape = 2;
  s.conditions.push_back({"Running", "True", "AllPodsRunning", "ok", "2024-01-01T00:00:06Z", 3});
  EXPECT_EQ(ParseStatus(StatusToJson(s)), s);
  EXPECT_EQ(StatusToJson(s)["podShape"], 2);
  s.pod_shape = 0;
  EXPECT_FALSE(StatusToJson(s).contains("podShape")) << "not recorded";
}

TEST(ParseNcclJob, ReadsTheQueueLabel) {
  Json object = testing::JobJson();
  object["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "team-a"}};
  EXPECT_EQ(api::ParseNcclJob(object)->queue_name, "team-a");
  EXPECT_EQ(testing::Job().queue_name, "");
}

TEST(Gang, AnUnknownValueIsASpecError) {
  Json object = testing::JobJson(4, 1);
  object["spec"]["gangScheduling"] = "Sometimes";
  auto job = api::ParseNcclJob(object);
  ASSERT_TRUE(job.ok());
  EXPECT_NE(job->spec_error.find("spec.gangScheduling must be Auto, Required or Disabled, got Sometimes"), std::string::npos)
      << job->spec_error;
}

}  // namespace
}  // namespace ncclop::api
