#include "flags.h"

#include <gtest/gtest.h>

#include "contract/release_version.h"

namespace ncclop {
namespace {

TEST(Flags, Defaults) {
  auto f = ParseFlags({});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->pod.sidecar_image, "nccl-sidecar:" + std::string(contract::kReleaseVersion)) << "this release's sidecar";
  EXPECT_EQ(f->pod.sidecar_image_pull_policy, "Always");
  EXPECT_EQ(f->pod.sidecar_resources.cpu_limit, "500m");
  EXPECT_EQ(f->pod.sidecar_resources.memory_limit, "64Mi");
  EXPECT_EQ(f->namespace_, "");
  EXPECT_FALSE(f->leader_elect);
  EXPECT_EQ(f->concurrency, 4);
  EXPECT_EQ(f->metrics_bind_address, ":8080");
}

TEST(Flags, BothSpellingsAndBooleanForms) {
  auto f = ParseFlags({"--namespace", "ml", "--kubeconfig=/k", "--leader-elect", "--concurrency=8",
                       "--log-format=json", "--log-level", "debug", "--metrics-bind-address=0"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->namespace_, "ml");
  EXPECT_EQ(f->kubeconfig, "/k");
  EXPECT_TRUE(f->leader_elect);
  EXPECT_EQ(f->concurrency, 8);
  EXPECT_EQ(f->log_format, logging::Format::kJson);
  EXPECT_EQ(f->log_level, logging::Level::kDebug);
  EXPECT_EQ(f->metrics_bind_address, "0");
  EXPECT_FALSE(ParseFlags({"--leader-elect=false"})->leader_elect);
}

TEST(Flags, SidecarResourcesAndPullPolicy) {
  auto f = ParseFlags({"--sidecar-cpu-request=0.05", "--sidecar-memory-request", "48Mi", "--sidecar-cpu-limit=",
                       "--sidecar-memory-limit=1e8", "--sidecar-image-pull-policy=IfNotPresent"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->pod.sidecar_resources.cpu_request, "0.05");
  EXPECT_EQ(f->pod.sidecar_resources.memory_request, "48Mi");
  EXPECT_EQ(f->pod.sidecar_resources.cpu_limit, "") << "empty leaves the limit unset";
  EXPECT_EQ(f->pod.sidecar_resources.memory_limit, "1e8");
  EXPECT_EQ(f->pod.sidecar_image_pull_policy, "IfNotPresent");
  EXPECT_EQ(ParseFlags({"--sidecar-image-pull-policy="})->pod.sidecar_image_pull_policy, "");
  EXPECT_EQ(ParseFlags({"--sidecar-ephemeral-storage-limit=1Gi"})->pod.sidecar_resources.ephemeral_storage_limit, "1Gi");
  EXPECT_NE(ParseFlags({"--sidecar-memory-limit=64MB"}).status().message().find("Kubernetes quantity"),
            std::string::npos);
  EXPECT_NE(ParseFlags({"--sidecar-image-pull-policy=always"}).status().message().find("IfNotPresent"),
            std::string::npos);
}

TEST(Flags, GpuResourceNameIsAnExtendedResourceName) {
  EXPECT_EQ(ParseFlags({})->pod.gpu_resource, "nvidia.com/gpu");
  for (const char* name : {"amd.com/gpu", "nvidia.com/mig-1g.10gb", "gpu.intel.com/i915", "example.com/A_b.c"}) {
    auto f = ParseFlags({std::string("--gpu-resource-name=") + name});
    ASSERT_TRUE(f.ok()) << name << ": " << f.status().message();
    EXPECT_EQ(f->pod.gpu_resource, name);
  }
  for (const char* name : {"gpu", "kubernetes.io/gpu", "node.kubernetes.io/gpu", "requests.nvidia.com/gpu", "/gpu",
                           "nvidia.com/", "nvidia.com/a/b", "Nvidia.com/gpu", "nvidia.com/-gpu", ""}) {
    auto f = ParseFlags({std::string("--gpu-resource-name=") + name});
    ASSERT_FALSE(f.ok()) << name;
    EXPECT_NE(f.status().message().find("an extended resource name"), std::string::npos) << f.status().message();
  }
}

TEST(Flags, ErrorsSayWhatIsWrong) {
  EXPECT_NE(ParseFlags({"--concurrency=0"}).status().message().find("1 to 64"), std::string::npos);
  EXPECT_NE(ParseFlags({"--log-format=xml"}).status().message().find("text or json"), std::string::npos);
  EXPECT_NE(ParseFlags({"--bogus"}).status().message().find("unknown flag --bogus"), std::string::npos);
  EXPECT_NE(ParseFlags({"--namespace"}).status().message().find("needs a value"), std::string::npos);
}

TEST(Flags, VersionIsTheProgramAndTheReleaseVersion) {
  auto f = ParseFlags({"--version"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->version);
  EXPECT_FALSE(f->help);
  EXPECT_EQ(VersionText(), "nccl-operator " + std::string(contract::kReleaseVersion) + "\n");
}

TEST(Flags, HelpMentionsEveryFlag) {
  for (const char* flag : {"--kubeconfig", "--namespace", "--leader-elect", "--metrics-bind-address",
                           "--health-probe-bind-address", "--sidecar-image", "--log-format", "--log-level",
                           "--concurrency", "--sidecar-image-pull-policy", "--sidecar-cpu-request",
                           "--sidecar-memory-request", "--sidecar-cpu-limit", "--sidecar-memory-limit",
                           "--sidecar-ephemeral-storage-request", "--sidecar-ephemeral-storage-limit", "--version"}) {
    EXPECT_NE(HelpText().find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace ncclop
