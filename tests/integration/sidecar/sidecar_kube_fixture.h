// The fixture of the sidecar's tests against the real kube-apiserver of the CTest fixture
// `controlplane`. Each sidecar authenticates with a ServiceAccount token (TokenRequest) whose
// Role names only its job's ConfigMap and root pod, as the operator sets it up, so RBAC and the
// fieldSelector watch are exercised for real. The test plays the operator (writes the
// ConfigMap) and the kubelet (starts the sidecar processes with the pod's env).
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "contract/env.h"
#include "contract/unique_id.h"
#include "kube/client.h"
#include "kube/config.h"
#include "sidecar_process.h"
#include "testsupport/controlplane.h"

namespace sidecar_it {

using nlohmann::json;
using std::chrono::seconds;

inline constexpr char kJob[] = "demo";
inline constexpr char kJobUid[] = "0b1c2d3e-uid";

inline std::string SomeId(int seed) {
  std::string id(128, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(seed * 131 + i * 7);
  return id;
}

class SidecarKubeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = kube::LoadKubeconfigFile(testsupport::Kubeconfig());
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    admin_config_ = *config;
    admin_ = std::make_shared<kube::Client>(admin_config_);
    static std::atomic<int> counter{0};
    ns_ = "sidecar-it-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    auto created = admin_->Create(kube::resources::kNamespaces, "", {{"apiVersion", "v1"}, {"kind", "Namespace"},
                                                                     {"metadata", {{"name", ns_}}}});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    CreateJobRbac();
    WriteTokenKubeconfig();
  }

  void TearDown() override {
    if (admin_) admin_->Delete(kube::resources::kNamespaces, "", ns_);
  }

  // What the operator makes per job: ServiceAccount + Role (by resourceNames) + RoleBinding.
  void CreateJobRbac() {
    std::string name = std::string(kJob) + "-nccl";
    json sa = {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", name}}}};
    json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "Role"}, {"metadata", {{"name", name}}},
                 {"rules", json::array({{{"apiGroups", {""}}, {"resources", {"configmaps"}},
                                         {"resourceNames", {name}}, {"verbs", {"get", "list", "watch"}}},
                                        {{"apiGroups", {""}}, {"resources", {"pods"}},
                                         {"resourceNames", {std::string(kJob) + "-0"}}, {"verbs", {"get", "patch"}}}})}};
    json binding = {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "RoleBinding"},
                    {"metadata", {{"name", name}}},
                    {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}}},
                    {"subjects", json::array({{{"kind", "ServiceAccount"}, {"name", name}, {"namespace", ns_}}})}};
    for (auto [resource, object] : {std::pair{&kube::resources::kServiceAccounts, sa},
                                    std::pair{&kube::resources::kRoles, role},
                                    std::pair{&kube::resources::kRoleBindings, binding}}) {
      auto r = admin_->Create(*resource, ns_, object);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  }

  // A kubeconfig holding only the job ServiceAccount's token, like the pod's mounted one.
  void WriteTokenKubeconfig() {
    std::string path = "/api/v1/namespaces/" + ns_ + "/serviceaccounts/" + kJob + "-nccl/token";
    json request = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"},
                    {"spec", {{"expirationSeconds", 3600}}}};
    auto response = admin_->Request("POST", path, request.dump(), "application/json");
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    std::string token = json::parse(response->body)["status"]["token"];
    json cluster = {{"server", admin_config_.server}};
    if (!admin_config_.ca_file.empty()) {
      cluster["certificate-authority"] = admin_config_.ca_file;
    } else {
      cluster["certificate-authority-data"] = contract::Base64Encode(admin_config_.ca_data);
    }
    json kubeconfig = {{"apiVersion", "v1"}, {"kind", "Config"}, {"current-context", "sa"},
                       {"clusters", json::array({{{"name", "test"}, {"cluster", cluster}}})},
                       {"users", json::array({{{"name", "sa"}, {"user", {{"token", token}}}}})},
                       {"contexts", json::array({{{"name", "sa"},
                                                  {"context", {{"cluster", "test"}, {"user", "sa"}, {"namespace", ns_}}}}})}};
    token_kubeconfig_ = std::string(::testing::TempDir()) + "/" + ns_ + ".kubeconfig";
    std::ofstream(token_kubeconfig_) << kubeconfig.dump(2);
  }

  // The operator's side: the ConfigMap at `attempt`, with the id once published.
  void PublishConfigMap(int attempt, const std::optional<std::string>& id) {
    json data = {{"attempt", std::to_string(attempt)}, {"jobUID", kJobUid}};
    data["uniqueId"] = id ? json(contract::Base64Encode(*id)) : json(nullptr);  // null removes it
    auto existing = admin_->Get(kube::resources::kConfigMaps, ns_, std::string(kJob) + "-nccl");
    if (existing.status().IsNotFound()) {
      if (!id) data.erase("uniqueId");
      auto r = admin_->Create(kube::resources::kConfigMaps, ns_,
                              {{"apiVersion", "v1"}, {"kind", "ConfigMap"},
                               {"metadata", {{"name", std::string(kJob) + "-nccl"}}}, {"data", data}});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      return;
    }
    auto r = admin_->Patch(kube::resources::kConfigMaps, ns_, std::string(kJob) + "-nccl", kube::PatchType::kMerge,
                           {{"data", data}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  // The env an operator before the sidecar's lean env injected (older pods still run with it).
  Env OldPodEnv(int index, int attempt) const {
    return {{"NCCLJOB_NAME", kJob}, {"NCCLJOB_NAMESPACE", ns_}, {"NCCLJOB_UID", kJobUid},
            {"NCCLJOB_INDEX", std::to_string(index)}, {"NCCLJOB_REPLICAS", "2"}, {"NCCLJOB_GPUS_PER_POD", "1"},
            {"NCCLJOB_WORLD_SIZE", "2"}, {"NCCLJOB_ATTEMPT", std::to_string(attempt)},
            {"NCCLJOB_POD_NAME", std::string(kJob) + "-" + std::to_string(index)}};
  }

  // What the operator injects now (contract::env::kSidecarEnv): no namespace (the token
  // kubeconfig's context names it, as the mounted service account's namespace file does in a pod).
  Env PodEnv(int index, int attempt) const {
    Env old = OldPodEnv(index, attempt), lean;
    for (const char* name : contract::env::kSidecarEnv) {
      if (old.count(name)) lean[name] = old[name];
    }
    return lean;
  }

  // The sidecar of pod `index`, created for `attempt`, with `flags` after the test's own; not
  // waited for. `run` tells restarts apart in the log's name.
  std::unique_ptr<SidecarProcess> LaunchSidecar(int index, int attempt, const std::vector<std::string>& flags,
                                                int run = 0, bool old_env = false) {
    std::string log = std::string(::testing::TempDir()) + "/" + ns_ + "-sidecar-" + std::to_string(index) + "-a" +
                      std::to_string(attempt) + (run ? "-r" + std::to_string(run) : "") + ".log";
    std::vector<std::string> args{"--kubeconfig", token_kubeconfig_, "--log-level", "debug"};
    args.insert(args.end(), flags.begin(), flags.end());
    return std::make_unique<SidecarProcess>(NCCL_SIDECAR_BIN, old_env ? OldPodEnv(index, attempt) : PodEnv(index, attempt),
                                            args, log);
  }

  // `listen`: the API's address (default: a port the kernel picks). Waits until it serves.
  std::unique_ptr<SidecarProcess> StartSidecar(int index, int attempt, const std::string& listen = "",
                                               int run = 0, bool old_env = false) {
    std::vector<std::string> flags;
    if (!listen.empty()) flags = {"--listen", listen};
    auto process = LaunchSidecar(index, attempt, flags, run, old_env);
    EXPECT_TRUE(process->WaitStarted()) << process->Log();
    return process;
  }

  static bool BecomesReady(SidecarProcess& sidecar) {
    httplib::Client probe("127.0.0.1", sidecar.probe_port());
    return testsupport::WaitFor([&] {
      auto r = probe.Get("/readyz");
      return r && r->status == 200;
    }, std::chrono::seconds(30));
  }

  static httplib::Result GetId(SidecarProcess& sidecar, int timeout_seconds) {
    httplib::Client client("127.0.0.1", sidecar.api_port());
    client.set_read_timeout(seconds(timeout_seconds + 10));
    return client.Get("/v1/id?timeout=" + std::to_string(timeout_seconds));
  }

  // The root pod as the operator would create it (no kubelet runs, so it stays Pending).
  void CreateRootPod() {
    json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
                {"metadata", {{"name", std::string(kJob) + "-0"}, {"labels", {{"nccl.dev/job-name", kJob}}}}},
                {"spec", {{"serviceAccountName", std::string(kJob) + "-nccl"}, {"automountServiceAccountToken", false},
                          {"containers", json::array({{{"name", "trainer"}, {"image", "example.invalid/trainer:1"}}})}}}};
    auto created = admin_->Create(kube::resources::kPods, ns_, pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // What the job's Role lets its ServiceAccount do to the root pod (the operator's: get, patch).
  void RootPodVerbs(json verbs) {
    const std::string role = std::string(kJob) + "-nccl";
    json rules = json::array({{{"apiGroups", {""}}, {"resources", {"configmaps"}}, {"resourceNames", {role}},
                               {"verbs", {"get", "list", "watch"}}},
                              {{"apiGroups", {""}}, {"resources", {"pods"}},
                               {"resourceNames", {std::string(kJob) + "-0"}}, {"verbs", verbs}}});
    auto r = admin_->Patch(kube::resources::kRoles, ns_, role, kube::PatchType::kMerge, {{"rules", rules}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  json RootPodAnnotations() {
    auto current = admin_->Get(kube::resources::kPods, ns_, std::string(kJob) + "-0");
    EXPECT_TRUE(current.ok()) << current.status().ToString();
    return current.ok() ? (*current)["metadata"].value("annotations", json::object()) : json::object();
  }

  kube::Config admin_config_;
  std::shared_ptr<kube::Client> admin_;
  std::string ns_;
  std::string token_kubeconfig_;
};

}  // namespace sidecar_it
