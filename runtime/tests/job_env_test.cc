#include "nccl_k8s/job_env.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace nccl_k8s {
namespace {

using Env = std::map<std::string, std::string>;

Result<JobEnv> Parse(const Env& env) {
  return ParseJobEnv([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

Env Valid() {
  return {{"NCCLJOB_INDEX", "1"},        {"NCCLJOB_WORLD_SIZE", "8"},
          {"NCCLJOB_GPUS_PER_POD", "4"}, {"NCCLJOB_ATTEMPT", "3"},
          {"NCCLJOB_SIDECAR_URL", "http://127.0.0.1:8471"}, {"NCCLJOB_POD_IP", "10.0.0.7"}};
}

TEST(JobEnv, ParsesTheContract) {
  auto env = Parse(Valid());
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->index, 1);
  EXPECT_EQ(env->world_size, 8);
  EXPECT_EQ(env->gpus_per_pod, 4);
  EXPECT_EQ(env->replicas, 2);
  EXPECT_EQ(env->attempt, 3);
  EXPECT_EQ(env->first_rank(), 4);  // index * GPUs per pod
  EXPECT_EQ(env->pod_ip, "10.0.0.7");
  EXPECT_EQ(env->init_timeout, std::chrono::seconds(300));
  EXPECT_FALSE(env->is_root());
}

TEST(JobEnv, CommModeDefaultsToNonBlocking) {
  auto env = Parse(Valid());
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_FALSE(env->blocking_comms);

  Env blocking = Valid();
  blocking["NCCL_K8S_COMM_MODE"] = "blocking";
  env = Parse(blocking);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_TRUE(env->blocking_comms);

  Env explicit_default = Valid();
  explicit_default["NCCL_K8S_COMM_MODE"] = "nonblocking";
  env = Parse(explicit_default);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_FALSE(env->blocking_comms);
}

TEST(JobEnv, RejectsAnUnknownCommModeAlongsideOtherProblems) {
  Env bad = Valid();
  bad["NCCL_K8S_COMM_MODE"] = "Blocking";
  bad.erase("NCCLJOB_ATTEMPT");
  auto env = Parse(bad);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), Code::kInvalidEnv);
  EXPECT_NE(env.status().message().find("NCCL_K8S_COMM_MODE='Blocking'"), std::string::npos)
      << env.status().message();
  EXPECT_NE(env.status().message().find("NCCLJOB_ATTEMPT"), std::string::npos) << env.status().message();
}

TEST(JobEnv, ZeroGpusMeansOneCpuRankPerPod) {
  Env e = Valid();
  e["NCCLJOB_GPUS_PER_POD"] = "0";
  e["NCCLJOB_WORLD_SIZE"] = "3";
  auto env = Parse(e);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->ranks_per_pod(), 1);
  EXPECT_EQ(env->replicas, 3);
  EXPECT_EQ(env->first_rank(), 1);
}

TEST(JobEnv, NamesEveryMissingVariable) {
  auto env = Parse({});
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), Code::kInvalidEnv);
  for (const char* name : {"NCCLJOB_INDEX", "NCCLJOB_WORLD_SIZE", "NCCLJOB_GPUS_PER_POD", "NCCLJOB_ATTEMPT",
                           "NCCLJOB_SIDECAR_URL"}) {
    EXPECT_NE(env.status().message().find(std::string(name) + " is not set"), std::string::npos) << name;
  }
}

TEST(JobEnv, NamesMalformedValues) {
  Env e = Valid();
  e["NCCLJOB_ATTEMPT"] = "0";
  e["NCCLJOB_INDEX"] = "1x";
  e["NCCLJOB_INIT_TIMEOUT_SECONDS"] = "-5";
  e["NCCLJOB_SIDECAR_URL"] = "https://x";
  auto env = Parse(e);
  ASSERT_FALSE(env.ok());
  const std::string& m = env.status().message();
  EXPECT_NE(m.find("NCCLJOB_ATTEMPT='0'"), std::string::npos) << m;
  EXPECT_NE(m.find("NCCLJOB_INDEX='1x'"), std::string::npos) << m;
  EXPECT_NE(m.find("NCCLJOB_INIT_TIMEOUT_SECONDS='-5'"), std::string::npos) << m;
  EXPECT_NE(m.find("NCCLJOB_SIDECAR_URL='https://x'"), std::string::npos) << m;
}

TEST(JobEnv, CrossChecksSizes) {
  Env e = Valid();
  e["NCCLJOB_WORLD_SIZE"] = "6";  // not a multiple of 4 GPUs per pod
  EXPECT_NE(Parse(e).status().message().find("not a multiple"), std::string::npos);
  e = Valid();
  e["NCCLJOB_REPLICAS"] = "3";  // 8 / 4 = 2 pods
  EXPECT_NE(Parse(e).status().message().find("NCCLJOB_REPLICAS=3 disagrees"), std::string::npos);
  e = Valid();
  e["NCCLJOB_INDEX"] = "2";  // only pods 0 and 1
  EXPECT_NE(Parse(e).status().message().find("NCCLJOB_INDEX=2 is not below"), std::string::npos);
}

TEST(JobEnv, ReadsTheTimeout) {
  Env e = Valid();
  e["NCCLJOB_INIT_TIMEOUT_SECONDS"] = "42";
  auto env = Parse(e);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->init_timeout, std::chrono::seconds(42));
}

}  // namespace
}  // namespace nccl_k8s
