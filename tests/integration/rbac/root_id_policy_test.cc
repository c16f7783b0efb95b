// Who may set the root's id (issue 11): every pod of a job shares a ServiceAccount whose Role
// may patch the root pod <job>-0, so RBAC alone lets any of them rewrite its nccl.dev/unique-id.
// The chart's ValidatingAdmissionPolicy (charts/nccl-operator/templates/root-id-policy.yaml,
// rendered by helm and applied here, bound to this test's namespace only) lets only the pod
// itself change those annotations. Judged by the real API server with pod-bound tokens
// (TokenRequest with a boundObjectRef, what the kubelet mounts into every pod).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
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
using namespace std::chrono_literals;
namespace resources = kube::resources;

constexpr char kIdAnnotation[] = "nccl.dev/unique-id";
constexpr char kIdAttemptAnnotation[] = "nccl.dev/unique-id-attempt";

ncclop::api::NcclJob JobNamed(const std::string& name, const std::string& ns) {
  Json container = {{"name", "trainer"}, {"image", "t:1"}};
  Json spec = {{"replicas", 2}, {"template", {{"spec", {{"containers", Json::array({container})}}}}}};
  Json object = {{"apiVersion", "nccl.dev/v1alpha1"}, {"kind", "NcclJob"},
                 {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}}}, {"spec", spec}};
  auto job = ncclop::api::ParseNcclJob(object);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return *job;
}

Json IdPatch(const std::string& id, const std::string& attempt) {
  return {{"metadata", {{"annotations", {{kIdAnnotation, id}, {kIdAttemptAnnotation, attempt}}}}}};
}

class RootIdPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = kube::LoadKubeconfigFile(testsupport::Kubeconfig(), {});
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    admin_config_ = *config;
    admin_ = std::make_shared<kube::Client>(admin_config_);
    ns_ = "rootid-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000000);
    release_ = ns_;
    ASSERT_TRUE(admin_->Create(resources::kNamespaces, "", {{"metadata", {{"name", ns_}}}}).ok());
    auto job = JobNamed("alpha", ns_);
    for (auto [resource, object] : {std::pair{&resources::kServiceAccounts, ncclop::desired::ServiceAccount(job)},
                                    std::pair{&resources::kRoles, ncclop::desired::Role(job)},
                                    std::pair{&resources::kRoleBindings, ncclop::desired::RoleBinding(job)}}) {
      object["metadata"].erase("ownerReferences");  // no NcclJob exists for the collector to follow
      auto created = admin_->Create(*resource, ns_, object);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
    }
    for (const char* name : {"alpha-0", "alpha-1", "probe-0"}) {
      Json pod = {{"metadata", {{"name", name}, {"labels", {{"nccl.dev/job-name", "alpha"}}}}},
                  {"spec", {{"serviceAccountName", "alpha-nccl"},
                            {"containers", Json::array({{{"name", "c"}, {"image", "i"}}})}}}};
      auto created = admin_->Create(resources::kPods, ns_, pod);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
      uids_[name] = created->at("metadata").at("uid").get<std::string>();
    }
    InstallPolicy();
  }

  void TearDown() override {
    testsupport::RunKubectl("delete validatingadmissionpolicybinding,validatingadmissionpolicy -l app.kubernetes.io/instance=" +
                            release_ + " --wait=false");
    admin_->Delete(resources::kNamespaces, "", ns_);
  }

  // The chart's own policy, bound to this namespace (watchNamespace), so tests running beside
  // this one are not judged by it. Admission policies load asynchronously: an admin change of
  // the probe pod's id is refused once it is in force.
  void InstallPolicy() {
    std::string render = testsupport::RequiredEnv("NCCLOP_TEST_HELM") + " template " + release_ + " " +
                         NCCLOP_SOURCE_DIR "/charts/nccl-operator --kube-version 1.35.0 --set watchNamespace=" + ns_ +
                         " --show-only templates/root-id-policy.yaml";
    auto applied = testsupport::Run(render + " | " + testsupport::Kubectl() + " --kubeconfig " +
                                    testsupport::Kubeconfig() + " apply -f -");
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    int round = 0;
    bool in_force = testsupport::WaitFor([&] {
      auto patched = admin_->Patch(resources::kPods, ns_, "probe-0", kube::PatchType::kMerge,
                                   IdPatch("probe" + std::to_string(++round), "1"));
      return patched.status().IsForbidden();
    }, 60s, 200ms);
    ASSERT_TRUE(in_force) << "the policy was not in force within 60 s";
  }

  // A client holding a token of the job's ServiceAccount, bound to `pod` (empty: not bound).
  std::shared_ptr<kube::Client> ClientBoundTo(const std::string& pod) {
    Json spec = {{"expirationSeconds", 600}};
    if (!pod.empty()) spec["boundObjectRef"] = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", pod}, {"uid", uids_[pod]}};
    Json request = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", spec}};
    auto response = admin_->Request("POST", "/api/v1/namespaces/" + ns_ + "/serviceaccounts/alpha-nccl/token",
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

  std::string RootAnnotation(const std::string& key) {
    auto pod = admin_->Get(resources::kPods, ns_, "alpha-0");
    if (!pod.ok()) return "<" + pod.status().ToString() + ">";
    return pod->value("/metadata/annotations"_json_pointer, Json::object()).value(key, "");
  }

  kube::Config admin_config_;
  std::shared_ptr<kube::Client> admin_;
  std::string ns_;
  std::string release_;
  std::map<std::string, std::string> uids_;
};

// What the kubelet-mounted token carries: the API server names the pod in the user's extra.
TEST_F(RootIdPolicyTest, APodBoundTokenNamesItsPod) {
  auto root = ClientBoundTo("alpha-0");
  ASSERT_NE(root, nullptr);
  Json review = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
  auto who = root->Request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review.dump(), "application/json");
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  Json extra = Json::parse(who->body)["status"]["userInfo"]["extra"];
  EXPECT_EQ(extra["authentication.kubernetes.io/pod-name"], Json::array({"alpha-0"})) << who->body;
  EXPECT_EQ(extra["authentication.kubernetes.io/pod-uid"], Json::array({uids_["alpha-0"]})) << who->body;
}

TEST_F(RootIdPolicyTest, TheRootPodSetsItsOwnId) {
  auto root = ClientBoundTo("alpha-0");
  ASSERT_NE(root, nullptr);
  auto patched = root->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge, IdPatch("Uk9PVA==", "1"));
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ(RootAnnotation(kIdAnnotation), "Uk9PVA==");
  // And may set it again (a restarted sidecar reports the same id; a new attempt a new one).
  patched = root->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge, IdPatch("TkVX", "2"));
  EXPECT_TRUE(patched.ok()) << patched.status().ToString();
}

TEST_F(RootIdPolicyTest, AnotherPodOfTheJobCannotSetTheRootsId) {
  auto root = ClientBoundTo("alpha-0");
  auto worker = ClientBoundTo("alpha-1");
  ASSERT_NE(root, nullptr);
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(root->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge, IdPatch("Uk9PVA==", "1")).ok());

  auto forged = worker->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge, IdPatch("Rk9SR0VE", "1"));
  EXPECT_TRUE(forged.status().IsForbidden()) << forged.status().ToString();
  EXPECT_NE(forged.status().ToString().find("only pod alpha-0 itself"), std::string::npos) << forged.status().ToString();
  EXPECT_NE(forged.status().ToString().find("token of pod alpha-1"), std::string::npos) << forged.status().ToString();
  auto removed = worker->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kJson,
                               Json::array({{{"op", "remove"}, {"path", "/metadata/annotations/nccl.dev~1unique-id"}}}));
  EXPECT_TRUE(removed.status().IsForbidden()) << "removing the root's id: " << removed.status().ToString();
  auto attempt_only = worker->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge,
                                    {{"metadata", {{"annotations", {{kIdAttemptAnnotation, "9"}}}}}});
  EXPECT_TRUE(attempt_only.status().IsForbidden()) << "the id's attempt alone: " << attempt_only.status().ToString();
  // Dropping the label the binding selects on, in the same patch, does not escape it.
  auto unlabelled = worker->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge,
                                  {{"metadata", {{"labels", {{"nccl.dev/job-name", nullptr}}},
                                                 {"annotations", {{kIdAnnotation, "RVNDQVBF"}}}}}});
  EXPECT_TRUE(unlabelled.status().IsForbidden()) << unlabelled.status().ToString();
  EXPECT_EQ(RootAnnotation(kIdAnnotation), "Uk9PVA==");
}

TEST_F(RootIdPolicyTest, TokensBoundToNoPodAndAdminsCannotSetIt) {
  auto unbound = ClientBoundTo("");
  ASSERT_NE(unbound, nullptr);
  auto forged = unbound->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge, IdPatch("Rk9SR0VE", "1"));
  EXPECT_TRUE(forged.status().IsForbidden()) << forged.status().ToString();
  auto by_admin = admin_->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge, IdPatch("QURNSU4=", "1"));
  EXPECT_TRUE(by_admin.status().IsForbidden()) << by_admin.status().ToString();
  EXPECT_EQ(RootAnnotation(kIdAnnotation), "");
}

// The policy judges the id annotations only: everything else RBAC allows still goes through.
TEST_F(RootIdPolicyTest, OtherChangesToTheRootPodAreNotItsConcern) {
  auto worker = ClientBoundTo("alpha-1");
  ASSERT_NE(worker, nullptr);
  auto other = worker->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge,
                             {{"metadata", {{"annotations", {{"example.com/note", "x"}}}}}});
  EXPECT_TRUE(other.ok()) << other.status().ToString();
  auto by_admin = admin_->Patch(resources::kPods, ns_, "alpha-0", kube::PatchType::kMerge,
                                {{"metadata", {{"labels", {{"team", "ml"}}}}}});
  EXPECT_TRUE(by_admin.ok()) << by_admin.status().ToString();
}

}  // namespace
