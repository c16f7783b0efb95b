// The RBAC the operator gives each job's pods, judged by the real API server's authorizer: a
// job's ServiceAccount token reads its own ConfigMap and patches its own root pod, and gets 403
// for everything else, another job's ConfigMap above all. The objects come from the operator's
// own builders (desired/rbac.h, desired/pod.h), so this tests what the operator really creates;
// that holds for the per-job ServiceAccount and for one the template names (kept on the pods).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/nccl_job.h"
#include "desired/pod.h"
#include "desired/rbac.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "testsupport/controlplane.h"

namespace {

using Json = nlohmann::json;
namespace resources = kube::resources;

ncclop::api::NcclJob JobNamed(const std::string& name, const std::string& ns,
                              const std::string& service_account = "") {
  Json container = {{"name", "trainer"}, {"image", "t:1"}};
  Json pod_spec = {{"containers", Json::array({container})}};
  if (!service_account.empty()) pod_spec["serviceAccountName"] = service_account;
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
    // A pod that names no ServiceAccount is refused until the namespace's "default" one exists
    // (kube-controller-manager makes it; slower on a busy machine).
    ASSERT_TRUE(testsupport::WaitFor([&] { return admin_->Get(resources::kServiceAccounts, ns_, "default").ok(); },
                                     std::chrono::seconds(30)));
    for (const char* job : {"alpha", "beta"}) {
      CreateJobObjects(JobNamed(job, ns_));
      if (HasFatalFailure()) return;
      for (int i = 0; i < 2; ++i) {
        Json pod = {{"metadata", {{"name", std::string(job) + "-" + std::to_string(i)}}},
                    {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "i"}}})}}}};
        auto made = admin_->Create(resources::kPods, ns_, pod);
        ASSERT_TRUE(made.ok()) << made.status().ToString();
      }
    }
    alpha_ = ClientFor("alpha-nccl");
  }

  void TearDown() override { admin_->Delete(resources::kNamespaces, "", ns_); }

  // The Role, RoleBinding (and the per-job ServiceAccount when the pods use it) and ConfigMap
  // of `job`, as the operator's EnsureChildren makes them.
  void CreateJobObjects(const ncclop::api::NcclJob& job) {
    if (ncclop::desired::UsesJobServiceAccount(job)) {
      ASSERT_TRUE(admin_->Create(resources::kServiceAccounts, ns_, WithoutOwner(ncclop::desired::ServiceAccount(job))).ok());
    }
    ASSERT_TRUE(admin_->Create(resources::kRoles, ns_, WithoutOwner(ncclop::desired::Role(job))).ok());
    auto binding = admin_->Create(resources::kRoleBindings, ns_, WithoutOwner(ncclop::desired::RoleBinding(job)));
    ASSERT_TRUE(binding.ok()) << binding.status().ToString();
    Json cm = {{"metadata", {{"name", job.name + "-nccl"}}}, {"data", {{"attempt", "1"}}}};
    ASSERT_TRUE(admin_->Create(resources::kConfigMaps, ns_, cm).ok());
    WaitUntilTheBindingIsSeen(job);
  }

  // The API server's RBAC authorizer reads Roles and RoleBindings through its own informers, so a
  // grant made a moment ago may not be seen yet (more often on a busy machine). Waits, 30 s at
  // most, until it lets the job's RoleBinding subject get the job's ConfigMap (SubjectAccessReview).
  void WaitUntilTheBindingIsSeen(const ncclop::api::NcclJob& job) {
    const Json subject = ncclop::desired::RoleBinding(job)["subjects"][0];
    const std::string user = "system:serviceaccount:" + ns_ + ":" + subject["name"].get<std::string>();
    Json review = {{"apiVersion", "authorization.k8s.io/v1"},
                   {"kind", "SubjectAccessReview"},
                   {"spec",
                    {{"user", user},
                     {"groups", Json::array({"system:serviceaccounts", "system:serviceaccounts:" + ns_,
                                             "system:authenticated"})},
                     {"resourceAttributes",
                      {{"namespace", ns_}, {"verb", "get"}, {"resource", "configmaps"}, {"name", job.name + "-nccl"}}}}}};
    bool allowed = testsupport::WaitFor(
        [&] {
          auto response = admin_->Request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                                          review.dump(), "application/json");
          if (!response.ok()) return false;
          auto body = Json::parse(response->body, nullptr, false);
          return body.is_object() && body["status"].value("allowed", false);
        },
        std::chrono::seconds(30));
    ASSERT_TRUE(allowed) << user << " was never granted get on " << job.name << "-nccl";
  }

  // A user's own ServiceAccount carrying a cloud role (IRSA style), made before the job.
  void CreateUserServiceAccount(const std::string& name) {
    Json sa = {{"metadata", {{"name", name}, {"annotations", {{kRoleAnnotation, kRoleArn}}}}}};
    ASSERT_TRUE(admin_->Create(resources::kServiceAccounts, ns_, sa).ok());
  }

  static constexpr const char* kRoleAnnotation = "eks.amazonaws.com/role-arn";
  static constexpr const char* kRoleArn = "arn:aws:iam::111122223333:role/trainer";

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

TEST_F(JobRbacTest, TheTemplatesServiceAccountIsKeptOnThePodAndReadsOnlyItsJobsConfigMap) {
  CreateUserServiceAccount("trainer");
  auto gamma = JobNamed("gamma", ns_, "trainer");
  CreateJobObjects(gamma);
  // The pod exactly as the operator builds it, admitted by the real ServiceAccount admission.
  auto pod = admin_->Create(resources::kPods, ns_, WithoutOwner(ncclop::desired::Pod(gamma, 0, 1, {})));
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ((*pod)["spec"]["serviceAccountName"], "trainer");
  auto no_job_sa = admin_->Get(resources::kServiceAccounts, ns_, "gamma-nccl");
  EXPECT_TRUE(no_job_sa.status().IsNotFound()) << "no per-job ServiceAccount when the template names one";
  auto sa = admin_->Get(resources::kServiceAccounts, ns_, "trainer");
  ASSERT_TRUE(sa.ok()) << sa.status().ToString();
  EXPECT_EQ((*sa)["metadata"]["annotations"][kRoleAnnotation], kRoleArn);

  auto trainer = ClientFor("trainer");
  ASSERT_NE(trainer, nullptr);
  auto own = trainer->Get(resources::kConfigMaps, ns_, "gamma-nccl");
  EXPECT_TRUE(own.ok()) << own.status().ToString();
  auto root = trainer->Patch(resources::kPods, ns_, "gamma-0", kube::PatchType::kMerge,
                             {{"metadata", {{"annotations", {{"nccl.dev/unique-id-attempt", "1"}}}}}});
  EXPECT_TRUE(root.ok()) << root.status().ToString();
  for (const char* other : {"alpha-nccl", "beta-nccl"}) {
    auto got = trainer->Get(resources::kConfigMaps, ns_, other);
    EXPECT_EQ(got.status().code(), 403) << other << ": " << got.status().ToString();
  }
  auto by_alpha = alpha_->Get(resources::kConfigMaps, ns_, "gamma-nccl");
  EXPECT_EQ(by_alpha.status().code(), 403) << by_alpha.status().ToString();
}

// What REFERENCE.md says about sharing: jobs whose templates name one ServiceAccount can read
// each other's ids; a job with a ServiceAccount of its own still cannot.
TEST_F(JobRbacTest, JobsSharingAServiceAccountShareTheirIdsAndNoOneElse) {
  CreateUserServiceAccount("team");
  CreateJobObjects(JobNamed("gamma", ns_, "team"));
  CreateJobObjects(JobNamed("delta", ns_, "team"));
  auto team = ClientFor("team");
  ASSERT_NE(team, nullptr);
  for (const char* shared : {"gamma-nccl", "delta-nccl"}) {
    auto got = team->Get(resources::kConfigMaps, ns_, shared);
    EXPECT_TRUE(got.ok()) << shared << ": " << got.status().ToString();
    auto by_alpha = alpha_->Get(resources::kConfigMaps, ns_, shared);
    EXPECT_EQ(by_alpha.status().code(), 403) << shared << ": " << by_alpha.status().ToString();
  }
  auto alpha_cm = team->Get(resources::kConfigMaps, ns_, "alpha-nccl");
  EXPECT_EQ(alpha_cm.status().code(), 403) << alpha_cm.status().ToString();
}

}  // namespace
