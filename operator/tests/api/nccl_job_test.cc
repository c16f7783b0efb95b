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
                "spec.network.bootstrapRoots must be between 1"}));

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
  s.conditions.push_back({"Running", "True", "AllPodsRunning", "ok", "2024-01-01T00:00:06Z", 3});
  EXPECT_EQ(ParseStatus(StatusToJson(s)), s);
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
