// The real nccl-sidecar binary against the real kube-apiserver of the CTest fixture
// `controlplane`. Each sidecar authenticates with a ServiceAccount token (TokenRequest) whose
// Role names only its job's ConfigMap and root pod, as the operator sets it up, so RBAC and the
// fieldSelector watch are exercised for real. The test plays the operator (writes the
// ConfigMap) and the kubelet (starts the sidecar processes with the pod's env).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <string>

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
namespace {

using nlohmann::json;
using std::chrono::seconds;

constexpr char kJob[] = "demo";
constexpr char kJobUid[] = "0b1c2d3e-uid";

std::string SomeId(int seed) {
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

  // `listen`: the API's address (default: a port the kernel picks); `run` tells restarts apart in the log's name.
  std::unique_ptr<SidecarProcess> StartSidecar(int index, int attempt, const std::string& listen = "",
                                               int run = 0, bool old_env = false) {
    std::string log = std::string(::testing::TempDir()) + "/" + ns_ + "-sidecar-" + std::to_string(index) + "-a" +
                      std::to_string(attempt) + (run ? "-r" + std::to_string(run) : "") + ".log";
    std::vector<std::string> args{"--kubeconfig", token_kubeconfig_, "--log-level", "debug"};
    if (!listen.empty()) args.insert(args.end(), {"--listen", listen});
    auto process = std::make_unique<SidecarProcess>(
        NCCL_SIDECAR_BIN, old_env ? OldPodEnv(index, attempt) : PodEnv(index, attempt), args, log);
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

TEST_F(SidecarKubeTest, ServesOnlyItsOwnAttemptsId) {
  const std::string id1 = SomeId(1);
  const std::string id2 = SomeId(2);
  PublishConfigMap(1, id1);
  auto worker1 = StartSidecar(1, 1);
  ASSERT_TRUE(BecomesReady(*worker1)) << worker1->Log();

  auto got = GetId(*worker1, 30);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body;
  EXPECT_EQ(json::parse(got->body), (json{{"id", contract::Base64Encode(id1)}, {"ids", {contract::Base64Encode(id1)}},
                                          {"attempt", 1}, {"job", kJob}, {"jobUID", kJobUid}}));

  // The operator starts attempt 2 with a fresh id: the attempt-1 sidecar turns stale (410) and
  // never hands out the new id, whatever it answers on the way.
  PublishConfigMap(2, id2);
  bool stale = testsupport::WaitFor([&] {
    auto r = GetId(*worker1, 1);
    if (!r) return false;
    if (r->status == 200) {
      EXPECT_EQ(json::parse(r->body)["id"], contract::Base64Encode(id1));
    }
    EXPECT_EQ(r->body.find(contract::Base64Encode(id2)), std::string::npos);
    return r->status == 410;
  }, seconds(30));
  EXPECT_TRUE(stale) << worker1->Log();

  auto worker2 = StartSidecar(1, 2);
  got = GetId(*worker2, 30);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << worker2->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id2));
  EXPECT_EQ(json::parse(got->body)["attempt"], 2);

  for (auto* p : {worker1.get(), worker2.get()}) {
    EXPECT_EQ(p->Log().find(contract::Base64Encode(id1).substr(0, 24)), std::string::npos);
    EXPECT_EQ(p->Log().find(contract::Base64Encode(id2).substr(0, 24)), std::string::npos);
    EXPECT_EQ(p->Terminate(), 0) << p->Log();
  }
}

TEST_F(SidecarKubeTest, LongPollIsAnsweredWhenTheIdIsPublished) {
  PublishConfigMap(1, std::nullopt);
  auto worker = StartSidecar(1, 1);
  ASSERT_TRUE(BecomesReady(*worker)) << worker->Log();
  auto early = GetId(*worker, 0);
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 204);

  auto pending = std::async(std::launch::async, [&] { return GetId(*worker, 60); });
  const std::string id = SomeId(3);
  PublishConfigMap(1, id);
  auto got = pending.get();
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << worker->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id));
  EXPECT_EQ(worker->Terminate(), 0) << worker->Log();
}

// Pods made by an operator before the lean sidecar env carry NCCLJOB_NAMESPACE (and the
// pod's name, the world size): a sidecar reads them as before. The root is one such pod, the
// worker one of today's (no namespace in its env; the test's other cases all run so).
TEST_F(SidecarKubeTest, AnOlderPodsFullEnvStillWorks) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);
  auto root = StartSidecar(0, 1, "", 0, /*old_env=*/true);
  auto worker = StartSidecar(1, 1);
  ASSERT_TRUE(BecomesReady(*root)) << root->Log();
  ASSERT_TRUE(BecomesReady(*worker)) << worker->Log();
  httplib::Client client("127.0.0.1", root->api_port());
  const std::string id = SomeId(6);
  auto posted = client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 200) << posted->body << root->Log();
  EXPECT_EQ(RootPodAnnotations()["nccl.dev/unique-id"], contract::Base64Encode(id));
  PublishConfigMap(1, id);
  auto got = GetId(*worker, 30);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << worker->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id));
  httplib::Client info("127.0.0.1", worker->api_port());
  auto described = info.Get("/v1/info");
  ASSERT_TRUE(described);
  EXPECT_EQ(json::parse(described->body)["namespace"], ns_);  // from the token kubeconfig's context
  EXPECT_EQ(root->Terminate(), 0) << root->Log();
  EXPECT_EQ(worker->Terminate(), 0) << worker->Log();
}

TEST_F(SidecarKubeTest, RootPostAnnotatesItsOwnPod) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);

  auto root = StartSidecar(0, 1);
  httplib::Client client("127.0.0.1", root->api_port());
  const std::string id = SomeId(4);
  auto posted = client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 200) << posted->body;

  // Answered once stored: the annotations are on the pod when the 200 comes.
  json annotations = RootPodAnnotations();
  EXPECT_EQ(annotations["nccl.dev/unique-id"], contract::Base64Encode(id));
  EXPECT_EQ(annotations["nccl.dev/unique-id-attempt"], "1");

  auto second = client.Post("/v1/id", SomeId(5), "application/octet-stream");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 409);

  EXPECT_EQ(root->Log().find(contract::Base64Encode(id).substr(0, 24)), std::string::npos);
  EXPECT_EQ(root->Terminate(), 0) << root->Log();
}

// Found by tests/chaos: a root trainer of a CPU job ended right after its POST; the kubelet then
// stopped the sidecar. If the API server could not take the annotation yet (restarting; here:
// RBAC refuses the patch until the test allows it), the sidecar used to exit at once and the
// attempt's id was lost: the workers waited out their init timeout. Our trainers now wait for
// the POST's answer (given once the id is on the pod); for one that gives up waiting, the
// sidecar keeps reporting after SIGTERM, within the pod's grace period.
TEST_F(SidecarKubeTest, StoppedRootStillPutsAPostedIdOnItsPod) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);
  RootPodVerbs({"get"});  // the patch is refused until the test allows it

  auto root = StartSidecar(0, 1);
  httplib::Client client("127.0.0.1", root->api_port());
  client.set_read_timeout(seconds(1));  // a trainer that does not wait for the answer
  const std::string id = SomeId(7);
  auto posted = client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_FALSE(posted) << "answered " << posted->status << " while the id could not be on the pod: " << posted->body;
  ASSERT_TRUE(testsupport::WaitFor([&] { return root->Log().find("could not annotate the root pod") != std::string::npos; },
                                   seconds(30))) << root->Log();

  auto exit_code = std::async(std::launch::async, [&] { return root->Terminate(seconds(40)); });
  ASSERT_TRUE(testsupport::WaitFor([&] { return root->Log().find("still reporting it before stopping") != std::string::npos; },
                                   seconds(10))) << root->Log();
  RootPodVerbs({"get", "patch"});
  EXPECT_EQ(exit_code.get(), 0) << root->Log();
  auto current = admin_->Get(kube::resources::kPods, ns_, std::string(kJob) + "-0");
  ASSERT_TRUE(current.ok());
  json annotations = (*current)["metadata"].value("annotations", json::object());
  EXPECT_EQ(annotations.value("nccl.dev/unique-id", ""), contract::Base64Encode(id)) << root->Log();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id-attempt", ""), "1");
}

// The root gap (tests/chaos, root-sidecar): a root sidecar killed after it accepted the id and
// before the id was on its pod used to lose it (it had answered 200, so the trainer never posted
// again): the workers waited out the init timeout and the attempt restarted. Now the POST is
// answered only once the annotation is stored; a kill before that fails the POST, and the
// trainer's retry of the same id (runtime and Python clients retry a POST without an answer)
// reaches the restarted sidecar, which annotates the pod. Here RBAC refuses the patch until the
// test allows it, which holds the sidecar in the gap for as long as the test needs.
TEST_F(SidecarKubeTest, RootSidecarKilledBeforeAnnotatingLosesNoId) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);
  RootPodVerbs({"get"});

  auto first = StartSidecar(0, 1);
  const std::string listen = "127.0.0.1:" + std::to_string(first->api_port());  // the pod's fixed port
  const std::string id = SomeId(8);
  auto post = [&](SidecarProcess& sidecar) {
    httplib::Client client("127.0.0.1", sidecar.api_port());
    client.set_read_timeout(seconds(60));
    return client.Post("/v1/id", id, "application/octet-stream");
  };
  auto in_gap = std::async(std::launch::async, [&] { return post(*first); });
  ASSERT_TRUE(testsupport::WaitFor([&] { return first->Log().find("could not annotate the root pod") != std::string::npos; },
                                   seconds(30))) << first->Log();
  ASSERT_NE(first->Log().find("accepted the root id"), std::string::npos);
  // Accepted, not on the pod: the POST must not have been answered yet.
  ASSERT_EQ(in_gap.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the POST was answered before the id was on the pod";
  first->Kill();
  auto lost = in_gap.get();
  EXPECT_FALSE(lost) << "answered " << lost->status << " by a sidecar that never stored the id";
  EXPECT_FALSE(RootPodAnnotations().contains("nccl.dev/unique-id"));

  // The kubelet restarts the native sidecar on the same port; the trainer posts the same id again.
  RootPodVerbs({"get", "patch"});
  auto second = StartSidecar(0, 1, listen, /*run=*/2);
  ASSERT_EQ(second->api_port(), first->api_port());
  auto answered = post(*second);
  ASSERT_TRUE(answered) << second->Log();
  ASSERT_EQ(answered->status, 200) << answered->body << second->Log();
  // 200 means stored: the annotation is there now, not eventually.
  json annotations = RootPodAnnotations();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id", ""), contract::Base64Encode(id)) << second->Log();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id-attempt", ""), "1");
  EXPECT_EQ(second->Terminate(), 0) << second->Log();
}

// A root sidecar restarted after it put the id on its pod (the kubelet restarts a native sidecar
// that crashed) reads the id back from its pod: one attempt keeps one id across restarts, so a
// different id is refused with 409 and the same one answered 200, the pod unchanged.
TEST_F(SidecarKubeTest, ARestartedRootHoldsTheIdAlreadyOnItsPod) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);
  const std::string id = SomeId(9);
  auto first = StartSidecar(0, 1);
  const std::string listen = "127.0.0.1:" + std::to_string(first->api_port());
  {
    httplib::Client client("127.0.0.1", first->api_port());
    auto posted = client.Post("/v1/id", id, "application/octet-stream");
    ASSERT_TRUE(posted);
    ASSERT_EQ(posted->status, 200) << posted->body;
  }
  first->Kill();
  const std::string resource_version = [&] {
    auto pod = admin_->Get(kube::resources::kPods, ns_, std::string(kJob) + "-0");
    return pod.ok() ? (*pod)["metadata"].value("resourceVersion", "") : std::string();
  }();

  auto second = StartSidecar(0, 1, listen, /*run=*/2);
  httplib::Client client("127.0.0.1", second->api_port());
  client.set_read_timeout(seconds(30));
  // Posted at once: the POST waits for the sidecar to read its pod.
  auto other = client.Post("/v1/id", SomeId(10), "application/octet-stream");
  ASSERT_TRUE(other) << second->Log();
  EXPECT_EQ(other->status, 409) << other->body << second->Log();
  EXPECT_NE(other->body.find("a different id was already accepted for attempt 1"), std::string::npos) << other->body;
  auto same = client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 200) << same->body << second->Log();
  EXPECT_NE(second->Log().find("the root pod already carries the id of this attempt"), std::string::npos) << second->Log();

  json annotations = RootPodAnnotations();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id", ""), contract::Base64Encode(id));
  EXPECT_EQ(annotations.value("nccl.dev/unique-id-attempt", ""), "1");
  auto pod = admin_->Get(kube::resources::kPods, ns_, std::string(kJob) + "-0");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["metadata"].value("resourceVersion", ""), resource_version) << "the pod was not written again";
  EXPECT_EQ(second->Terminate(), 0) << second->Log();
}

TEST_F(SidecarKubeTest, CarriesOnAcrossAnApiServerRestart) {
  PublishConfigMap(1, std::nullopt);
  auto worker = StartSidecar(1, 1);
  ASSERT_TRUE(BecomesReady(*worker)) << worker->Log();

  // The watch breaks while the API server is away; the sidecar reconnects with backoff and
  // still sees the publication made after it came back.
  std::string restart = std::string(NCCLOP_SOURCE_DIR) + "/tests/harness/controlplane/restart-apiserver.sh --dir " +
                        testsupport::ControlPlaneDir();
  auto restarted = testsupport::Run(restart);
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;

  const std::string id = SomeId(6);
  PublishConfigMap(1, id);
  auto got = GetId(*worker, 60);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << worker->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id));
  EXPECT_EQ(worker->Terminate(), 0) << worker->Log();
}

}  // namespace
}  // namespace sidecar_it
