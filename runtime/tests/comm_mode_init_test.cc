// Init() with a bad NCCL_K8S_COMM_MODE fails with an env error before it talks to the sidecar or
// NCCL, and an explicit CommOptions.blocking wins over the variable. No GPU or sidecar needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "nccl_k8s/runtime.h"

namespace nccl_k8s {
namespace {

class CommModeInit : public ::testing::Test {
 protected:
  void SetUp() override {
    // A valid contract whose sidecar URL nothing listens on: reaching the id exchange would
    // end in kUnavailable or kDeadlineExceeded, not kInvalidEnv.
    setenv("NCCLJOB_INDEX", "1", 1);
    setenv("NCCLJOB_WORLD_SIZE", "2", 1);
    setenv("NCCLJOB_GPUS_PER_POD", "1", 1);
    setenv("NCCLJOB_ATTEMPT", "1", 1);
    setenv("NCCLJOB_SIDECAR_URL", "http://127.0.0.1:9", 1);
  }
  void TearDown() override {
    for (const char* name : {"NCCLJOB_INDEX", "NCCLJOB_WORLD_SIZE", "NCCLJOB_GPUS_PER_POD", "NCCLJOB_ATTEMPT",
                             "NCCLJOB_SIDECAR_URL", "NCCL_K8S_COMM_MODE"}) {
      unsetenv(name);
    }
  }
};

TEST_F(CommModeInit, ABadModeFailsBeforeTheIdExchange) {
  setenv("NCCL_K8S_COMM_MODE", "blockign", 1);
  CommOptions options;
  options.timeout = std::chrono::milliseconds(300);
  auto comms = Init(options);
  ASSERT_FALSE(comms.ok());
  EXPECT_EQ(comms.status().code(), Code::kInvalidEnv) << comms.status().ToString();
  EXPECT_NE(comms.status().message().find("NCCL_K8S_COMM_MODE='blockign'"), std::string::npos)
      << comms.status().message();
}

TEST_F(CommModeInit, AnExplicitOptionWinsOverTheVariable) {
  setenv("NCCL_K8S_COMM_MODE", "blockign", 1);
  CommOptions options;
  options.blocking = true;
  auto resolved = ResolveBlocking(options);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_TRUE(*resolved);

  options.timeout = std::chrono::milliseconds(300);
  auto comms = Init(options);  // gets past the mode, then finds no sidecar within the timeout
  ASSERT_FALSE(comms.ok());
  EXPECT_NE(comms.status().code(), Code::kInvalidEnv) << comms.status().ToString();
}

TEST_F(CommModeInit, TheVariableDecidesWhenNoOptionIsGiven) {
  setenv("NCCL_K8S_COMM_MODE", "Non-Blocking", 1);
  auto nonblocking = ResolveBlocking({});
  ASSERT_TRUE(nonblocking.ok()) << nonblocking.status().ToString();
  EXPECT_FALSE(*nonblocking);
  unsetenv("NCCL_K8S_COMM_MODE");
  auto unset = ResolveBlocking({});
  ASSERT_TRUE(unset.ok()) << unset.status().ToString();
  EXPECT_TRUE(*unset);
}

}  // namespace
}  // namespace nccl_k8s
