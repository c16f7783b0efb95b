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

Result<bool> CommMode(const char* value) {
  return ParseBlockingCommMode([value](const char* name) -> const char* {
    return std::string_view(name) == "NCCL_K8S_COMM_MODE" ? value : nullptr;
  });
}

TEST(CommMode, DefaultsToBlocking) {
  for (const char* unset : {static_cast<const char*>(nullptr), ""}) {
    auto mode = CommMode(unset);
    ASSERT_TRUE(mode.ok()) << mode.status().ToString();
    EXPECT_TRUE(*mode);
  }
}

TEST(CommMode, AcceptsBothModesInTheUsualSpellings) {
  for (const char* blocking : {"blocking", "Blocking", "BLOCKING"}) {
    auto mode = CommMode(blocking);
    ASSERT_TRUE(mode.ok()) << blocking << ": " << mode.status().ToString();
    EXPECT_TRUE(*mode) << blocking;
  }
  for (const char* nonblocking : {"nonblocking", "non-blocking", "non_blocking", "NonBlocking"}) {
    auto mode = CommMode(nonblocking);
    ASSERT_TRUE(mode.ok()) << nonblocking << ": " << mode.status().ToString();
    EXPECT_FALSE(*mode) << nonblocking;
  }
}

TEST(CommMode, RejectsAnythingElseNamingTheVariable) {
  for (const char* bad : {"block", "async", "1", "blocking-ish"}) {
    auto mode = CommMode(bad);
    ASSERT_FALSE(mode.ok()) << bad;
    EXPECT_EQ(mode.status().code(), Code::kInvalidEnv);
    EXPECT_NE(mode.status().message().find(std::string("NCCL_K8S_COMM_MODE='") + bad + "'"), std::string::npos)
        << mode.status().message();
  }
}

TEST(CommMode, ItsTypoNeverBreaksTheJobEnv) {
  Env env = Valid();
  env["NCCL_K8S_COMM_MODE"] = "typo";
  EXPECT_TRUE(Parse(env).ok());  // nccl-k8s-id and the id part do not read it
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

TEST(JobEnv, ReadsTheBootstrapRoots) {
  Env e = Valid();  // 2 pods of 4 GPUs, this is pod 1
  auto env = Parse(e);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->bootstrap_roots, 1);
  EXPECT_FALSE(env->bootstrap_roots_set);
  EXPECT_FALSE(env->is_root());
  e["NCCLJOB_BOOTSTRAP_ROOTS"] = "2";
  env = Parse(e);
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE(env->bootstrap_roots_set);
  EXPECT_EQ(env->root_slot(), 1);
  EXPECT_TRUE(env->is_root());
  e["NCCLJOB_BOOTSTRAP_ROOTS"] = "3";
  EXPECT_NE(Parse(e).status().message().find("NCCLJOB_BOOTSTRAP_ROOTS=3 is more than the number of pods (2)"),
            std::string::npos);
}

}  // namespace
}  // namespace nccl_k8s
