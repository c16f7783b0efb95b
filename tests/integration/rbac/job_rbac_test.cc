// The RBAC the operator gives each job's pods, judged by the real API server's authorizer: a
// job's ServiceAccount token reads its own ConfigMap and patches its own root pod, and gets 403
// for everything else, another job's ConfigMap above all. The objects come from the operator's
// own builders (desired/rbac.h), so this tests what the operator really creates.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/nccl_job.h"
#include "desired/rbac.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "testsupport/controlplane.h"

namespace {

using Json = nlohmann::json;
namespace resources = kube::resources;

ncclop::api::NcclJob JobNamed(const std::string& name, const std::string& ns) {
  Json container = {{"name", "trainer"}, {"image", "t:1"}};
  Json pod_spec = {{"containers", Json::array({container})}};
  Json spec = {{"replicas", 2}, {"template", {{"spec", pod_spec}}}};
  Json metadata = {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}};
  Json object = {{"apiVersion", "nccl.dev/v1alpha1"}, {"kind", "NcclJob"}, {"metadata", metadata}, {"spec", spec}};
  auto job = ncclop::api::ParseNcclJob(object);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return *job;
}

// The builders set owner references to the NcclJob; no such object exists here and the
// garbage collector would remove the RBAC objects, so ownership is left out of this test.
Json WithoutOwner(Json object) {
  object["metadata"].erase("ownerReferences");
  return object;
}

class JobRbacTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = kube::LoadKubeconfigFile(testsupport::Kubeconfig(), {});
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    admin_config_ = *config;
    admin_ = std::make_shared<kube::Client>(admin_config_);
    ns_ = "rbac-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000000);
    ASSERT_TRUE(admin_->Create(resources::kNamespaces, "", {{"metadata", {{"name", ns_}}}}).ok());
    for (const char* job : {"alpha", "beta"}) {
      auto spec = JobNamed(job, ns_);
      for (auto [resource, object] :
           {std::pair{&resources::kServiceAccounts, ncclop::desired::ServiceAccount(spec)},
            std::pair{&resources::kRoles, ncclop::desired::Role(spec)},
            std::pair{&resources::kRoleBindings, ncclop::desired::RoleBinding(spec)}}) {
        auto created = admin_->Create(*resource, ns_, WithoutOwner(object));
        ASSERT_TRUE(created.ok()) << created.status().ToString();
      }
      Json cm = {{"metadata", {{"name", std::string(job) + "-nccl"}}}, {"data", {{"attempt", "1"}}}};
      ASSERT_TRUE(admin_->Create(resources::kConfigMaps, ns_, cm).ok());
      for (int i = 0; i < 2; ++i) {
        Json pod = {{"metadata", {{"name", std::string(job) + "-" + std::to_string(i)}}},
                    {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "i"}}})}}}};
        ASSERT_TRUE(admin_->Create(resources::kPods, ns_, pod).ok());
      }
    }
    alpha_ = ClientFor("alpha-nccl");
  }

  void TearDown() override { admin_->Delete(resources::kNamespaces, "", ns_); }

  // A client holding only the ServiceAccount's token (TokenRequest), like a pod's mounted one.
  std::shared_ptr<kube::Client> ClientFor(const std::string& service_account) {
    Json request = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"},
                    {"spec", {{"expirationSeconds", 600}}}};
    auto response = admin_->Request(
        "POST", "/api/v1/namespaces/" + ns_ + "/serviceaccounts/" + service_account + "/token",
        request.dump(), "application/json");
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok()) return nullptr;
    kube::Config config;
    config.server = admin_config_.server;
    config.ca_file = admin_config_.ca_file;
    config.ca_data = admin_config_.ca_data;
    config.token = Json::parse(response->body)["status"]["token"];
    return std::make_shared<kube::Client>(config);
  }

  kube::Config admin_config_;
  std::shared_ptr<kube::Client> admin_;
  std::shared_ptr<kube::Client> alpha_;
  std::string ns_;
};

TEST_F(JobRbacTest, ReadsItsOwnConfigMapAndPatchesItsOwnRootPod) {
  ASSERT_NE(alpha_, nullptr);
  auto cm = alpha_->Get(resources::kConfigMaps, ns_, "alpha-nccl");
  EXPECT_TRUE(cm.ok()) << cm.status().ToString();
  kube::ListOptions by_name;
  by_name.field_selector = "metadata.name=alpha-nccl";
  auto list = alpha_->List(resources::kConfigMaps, ns_, by_name);
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  auto patched = alpha_->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge,
                               {{"metadata", {{"annotations", {{"nccl.dev/unique-id-attempt", "1"}}}}}});
  EXPECT_TRUE(patched.ok()) << patched.status().ToString();
}

TEST_F(JobRbacTest, AnotherJobsConfigMapIsForbidden) {
  ASSERT_NE(alpha_, nullptr);
  auto other = alpha_->Get(resources::kConfigMaps, ns_, "beta-nccl");
  EXPECT_TRUE(other.status().IsForbidden()) << other.status().ToString();
  EXPECT_EQ(other.status().code(), 403);
  kube::ListOptions by_name;
  by_name.field_selector = "metadata.name=beta-nccl";
  auto watched = alpha_->List(resources::kConfigMaps, ns_, by_name);
  EXPECT_TRUE(watched.status().IsForbidden()) << watched.status().ToString();
}

TEST_F(JobRbacTest, EverythingElseIsForbidden) {
  ASSERT_NE(alpha_, nullptr);
  auto all = alpha_->List(resources::kConfigMaps, ns_);
  EXPECT_TRUE(all.status().IsForbidden()) << "listing every ConfigMap: " << all.status().ToString();
  auto worker = alpha_->Patch(resources::kPods, ns_, "alpha-1", kube::PatchType::kMerge,
                              {{"metadata", {{"annotations", {{"x", "y"}}}}}});
  EXPECT_TRUE(worker.status().IsForbidden()) << "patching a non-root pod: " << worker.status().ToString();
  auto other_root = alpha_->Patch(resources::kPods, ns_, "beta-0", kube::PatchType::kMerge,
                                  {{"metadata", {{"annotations", {{"x", "y"}}}}}});
  EXPECT_TRUE(other_root.status().IsForbidden()) << "another job's root pod: " << other_root.status().ToString();
  auto write = alpha_->Patch(resources::kConfigMaps, ns_, "alpha-nccl", kube::PatchType::kMerge,
                             {{"data", {{"uniqueId", "forged"}}}});
  EXPECT_TRUE(write.status().IsForbidden()) << "writing its own ConfigMap (only the operator writes): "
                                            << write.status().ToString();
  auto secrets = alpha_->List(resources::kSecrets, ns_);
  EXPECT_TRUE(secrets.status().IsForbidden()) << secrets.status().ToString();
  auto create = alpha_->Create(resources::kPods, ns_,
                               {{"metadata", {{"name", "sneaky"}}},
                                {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "i"}}})}}}});
  EXPECT_TRUE(create.status().IsForbidden()) << create.status().ToString();
}

}  // namespace
