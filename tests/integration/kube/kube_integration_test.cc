// The Kubernetes client against a real kube-apiserver + etcd (the `controlplane` CTest
// fixture): CRUD, conflicts, server-side apply, custom resources, watches across an API
// server restart, relist after 410, and leader election between two processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "kube/resource.h"

extern char** environ;

namespace kube {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const Resource kWidgets{"kubeit.nccl.dev", "v1", "widgets", true};

// Polls `condition` until it holds or `timeout` passes (never a fixed sleep).
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return condition();
}

std::map<std::string, std::string> ReadEnvFile(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) == 0) line = line.substr(7);
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) value = value.substr(1, value.size() - 2);
    out[line.substr(0, eq)] = value;
  }
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json ConfigMap(const std::string& name, const std::map<std::string, std::string>& data,
               const std::map<std::string, std::string>& labels = {}) {
  Json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", data}};
  if (!labels.empty()) cm["metadata"]["labels"] = labels;
  return cm;
}

class KubeIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* kubeconfig = std::getenv("NCCLOP_TEST_KUBECONFIG");
    const char* dir = std::getenv("NCCLOP_TEST_CONTROLPLANE_DIR");
    if (kubeconfig == nullptr || dir == nullptr) {
      GTEST_FAIL() << "needs the control plane: run through ctest (fixture `controlplane`) or set "
                      "NCCLOP_TEST_KUBECONFIG and NCCLOP_TEST_CONTROLPLANE_DIR";
    }
    kubeconfig_ = kubeconfig;
    dir_ = dir;
    auto config = LoadKubeconfigFile(kubeconfig_);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    ClientOptions options;
    options.user_agent = "kube-integration-test/0.1";
    options.max_attempts = 8;  // rides out an API server restart
    client_ = std::make_shared<Client>(*config, options);

    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string lower;
    for (char c : test) {
      if (std::isupper(static_cast<unsigned char>(c)) && !lower.empty()) lower += '-';
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    ns_ = ("kit-" + lower).substr(0, 48) + "-" + std::to_string(::getpid());
    auto created = client_->Create(resources::kNamespaces, "",
                                   {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  void TearDown() override {
    if (client_ && !ns_.empty()) client_->Delete(resources::kNamespaces, "", ns_);
  }

  void RestartApiServer() {
    const std::string cmd = std::string(KUBE_SOURCE_DIR) + "/tests/harness/controlplane/restart-apiserver.sh --dir " + dir_;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  // Bumps etcd's revision and compacts all history before it, through etcd's HTTP gateway.
  void CompactEtcd() {
    auto env = ReadEnvFile(dir_ + "/env");
    ASSERT_FALSE(env["ETCD_URL"].empty());
    Config etcd_config;
    etcd_config.server = env["ETCD_URL"];
    Client etcd(etcd_config);
    ASSERT_TRUE(etcd.Request("POST", "/v3/kv/put", R"({"key":"a2l0L2J1bXA=","value":"MQ=="})", "application/json").ok());
    auto range = etcd.Request("POST", "/v3/kv/range", R"({"key":"a2l0L2J1bXA="})", "application/json");
    ASSERT_TRUE(range.ok()) << range.status().ToString();
    std::string revision = Json::parse(range->body)["header"]["revision"];
    auto compacted = etcd.Request("POST", "/v3/kv/compaction",
                                  Json({{"revision", revision}, {"physical", true}}).dump(), "application/json");
    ASSERT_TRUE(compacted.ok()) << compacted.status().ToString();
  }

  std::string kubeconfig_;
  std::string dir_;
  std::string ns_;
  std::shared_ptr<Client> client_;
};

TEST_F(KubeIntegrationTest, ServerVersion) {
  auto v = client_->ServerVersion();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  std::printf("kube-apiserver %s (%s)\n", v->value("gitVersion", "?").c_str(), v->value("platform", "?").c_str());
  EXPECT_EQ(v->value("major", ""), "1");
  EXPECT_FALSE(v->value("gitVersion", "").empty());
}

TEST_F(KubeIntegrationTest, ConfigMapCrudConflictsAndPaging) {
  const Resource& cms = resources::kConfigMaps;
  auto created = client_->Create(cms, ns_, ConfigMap("demo", {{"attempt", "1"}}, {{"app", "kit"}}));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string uid = (*created)["metadata"]["uid"];

  auto again = client_->Create(cms, ns_, ConfigMap("demo", {}));
  EXPECT_TRUE(again.status().IsAlreadyExists()) << again.status().ToString();

  auto got = client_->Get(cms, ns_, "demo");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["data"]["attempt"], "1");

  Json first = *got;
  first["data"]["attempt"] = "2";
  auto updated = client_->Update(cms, ns_, first);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();

  Json stale = *got;  // still carries the old resourceVersion
  stale["data"]["attempt"] = "3";
  auto conflict = client_->Update(cms, ns_, stale);
  EXPECT_EQ(conflict.status().code(), 409);
  EXPECT_TRUE(conflict.status().IsConflict()) << conflict.status().ToString();

  auto merged = client_->Patch(cms, ns_, "demo", PatchType::kMerge, {{"data", {{"uniqueId", "abc"}}}});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ((*merged)["data"]["attempt"], "2");
  EXPECT_EQ((*merged)["data"]["uniqueId"], "abc");
  auto strategic = client_->Patch(cms, ns_, "demo", PatchType::kStrategicMerge, {{"data", {{"jobUID", "u"}}}});
  ASSERT_TRUE(strategic.ok()) << strategic.status().ToString();
  auto json_patch = client_->Patch(cms, ns_, "demo", PatchType::kJson,
                                   Json::array({{{"op", "test"}, {"path", "/data/attempt"}, {"value", "2"}},
                                                {{"op", "remove"}, {"path", "/data/uniqueId"}}}));
  ASSERT_TRUE(json_patch.ok()) << json_patch.status().ToString();
  EXPECT_FALSE((*json_patch)["data"].contains("uniqueId"));
  auto failed_test = client_->Patch(cms, ns_, "demo", PatchType::kJson,
                                    Json::array({{{"op", "test"}, {"path", "/data/attempt"}, {"value", "9"}}}));
  EXPECT_FALSE(failed_test.ok());
  EXPECT_FALSE(failed_test.status().IsRetryable());

  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client_->Create(cms, ns_, ConfigMap("page-" + std::to_string(i), {}, {{"app", "kit"}})).ok());
  }
  ListOptions lo;
  lo.label_selector = "app=kit";
  lo.page_size = 2;  // 6 objects: three pages joined by continue tokens
  auto list = client_->List(cms, ns_, lo);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->items.size(), 6u);
  EXPECT_FALSE(list->resource_version.empty());
  EXPECT_EQ(list->items[0]["kind"], "ConfigMap");

  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "00000000-0000-0000-0000-000000000000";
  Status precondition = client_->Delete(cms, ns_, "demo", wrong_uid);
  EXPECT_TRUE(precondition.IsConflict()) << precondition.ToString();
  DeleteOptions right_uid;
  right_uid.precondition_uid = uid;
  right_uid.propagation_policy = "Background";
  right_uid.grace_period_seconds = 0;
  EXPECT_TRUE(client_->Delete(cms, ns_, "demo", right_uid).ok());
  auto gone = client_->Get(cms, ns_, "demo");
  EXPECT_TRUE(gone.status().IsNotFound()) << gone.status().ToString();
  EXPECT_EQ(gone.status().details_name(), "demo");
  EXPECT_TRUE(client_->Delete(cms, ns_, "demo").IsNotFound());
}

TEST_F(KubeIntegrationTest, CustomResourceCrudAndStatusSubresource) {
  const Json schema = {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  const Json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets.kubeit.nccl.dev"}}},
      {"spec",
       {{"group", "kubeit.nccl.dev"},
        {"scope", "Namespaced"},
        {"names", {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}, {"listKind", "WidgetList"}}},
        {"versions",
         {{{"name", "v1"},
           {"served", true},
           {"storage", true},
           {"subresources", {{"status", Json::object()}}},
           {"schema",
            {{"openAPIV3Schema",
              {{"type", "object"},
               {"properties", {{"spec", schema}, {"status", schema}}}}}}}}}}}}};
  auto created = client_->Create(resources::kCustomResourceDefinitions, "", crd);
  ASSERT_TRUE(created.ok() || created.status().IsAlreadyExists()) << created.status().ToString();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto got = client_->Get(resources::kCustomResourceDefinitions, "", "widgets.kubeit.nccl.dev");
        if (!got.ok()) return false;
        for (const auto& c : got->value("/status/conditions"_json_pointer, Json::array())) {
          if (c.value("type", "") == "Established" && c.value("status", "") == "True") return true;
        }
        return false;
      },
      30s));

  Json widget = {{"apiVersion", "kubeit.nccl.dev/v1"}, {"kind", "Widget"}, {"metadata", {{"name", "w1"}}},
                 {"spec", {{"replicas", 2}}}};
  Result<Json> w = Status::Local("NotYet", "");
  // The new resource is served a moment after Established; wait for it rather than sleep.
  ASSERT_TRUE(WaitFor(
      [&] {
        w = client_->Create(kWidgets, ns_, widget);
        return w.ok();
      },
      30s))
      << w.status().ToString();

  Json with_status = *w;
  with_status["status"] = {{"phase", "Ready"}};
  auto status_updated = client_->UpdateStatus(kWidgets, ns_, with_status);
  ASSERT_TRUE(status_updated.ok()) << status_updated.status().ToString();
  EXPECT_EQ((*status_updated)["status"]["phase"], "Ready");

  // A main-resource update ignores status (that is what the subresource is for).
  Json spec_change = *status_updated;
  spec_change["spec"]["replicas"] = 3;
  spec_change["status"]["phase"] = "Ignored";
  auto spec_updated = client_->Update(kWidgets, ns_, spec_change);
  ASSERT_TRUE(spec_updated.ok()) << spec_updated.status().ToString();
  EXPECT_EQ((*spec_updated)["spec"]["replicas"], 3);
  EXPECT_EQ((*spec_updated)["status"]["phase"], "Ready");

  auto patched = client_->Patch(kWidgets, ns_, "w1", PatchType::kMerge, {{"status", {{"phase", "Done"}}}},
                                PatchOptions{.field_manager = "kit", .force = false, .subresource = "status"});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ((*patched)["status"]["phase"], "Done");

  auto list = client_->List(kWidgets, ns_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]["kind"], "Widget");
  EXPECT_TRUE(client_->Delete(kWidgets, ns_, "w1").ok());
  EXPECT_TRUE(client_->Get(kWidgets, ns_, "w1").status().IsNotFound());
}

TEST_F(KubeIntegrationTest, ServerSideApply) {
  const Resource& cms = resources::kConfigMaps;
  Json desired = ConfigMap("applied", {{"attempt", "1"}});
  auto first = client_->Apply(cms, ns_, desired, "manager-a");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)["data"]["attempt"], "1");
  auto same = client_->Apply(cms, ns_, desired, "manager-a");  // idempotent
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)["metadata"]["resourceVersion"], (*first)["metadata"]["resourceVersion"]);

  Json other = ConfigMap("applied", {{"attempt", "2"}});
  auto conflict = client_->Apply(cms, ns_, other, "manager-b");
  EXPECT_TRUE(conflict.status().IsConflict()) << conflict.status().ToString();
  auto forced = client_->Apply(cms, ns_, other, "manager-b", /*force=*/true);
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_EQ((*forced)["data"]["attempt"], "2");
  bool b_owns = false;
  for (const auto& mf : (*forced)["metadata"]["managedFields"]) {
    if (mf.value("manager", "") == "manager-b") b_owns = true;
  }
  EXPECT_TRUE(b_owns);
  auto no_manager = client_->Patch(cms, ns_, "applied", PatchType::kApply, other);
  EXPECT_FALSE(no_manager.ok());
}

TEST_F(KubeIntegrationTest, WatchStreamsEventsAndStopsOnRequest) {
  const Resource& cms = resources::kConfigMaps;
  auto list = client_->List(cms, ns_);
  ASSERT_TRUE(list.ok());
  std::mutex mu;
  std::vector<std::string> seen;
  std::stop_source stop;
  Status result;
  std::thread watcher([&] {
    WatchOptions wo;
    wo.resource_version = list->resource_version;
    // The controller manager adds kube-root-ca.crt to every new namespace at its own pace.
    wo.field_selector = "metadata.name!=kube-root-ca.crt";
    result = client_->Watch(cms, ns_, wo, [&](WatchEvent&& e) {
      std::lock_guard lock(mu);
      if (e.type != EventType::kBookmark) seen.push_back(std::string(EventTypeName(e.type)) + " " + e.object["metadata"]["name"].get<std::string>());
      return true;
    }, stop.get_token());
  });
  ASSERT_TRUE(client_->Create(cms, ns_, ConfigMap("w", {})).ok());
  ASSERT_TRUE(client_->Patch(cms, ns_, "w", PatchType::kMerge, {{"data", {{"a", "b"}}}}).ok());
  ASSERT_TRUE(client_->Delete(cms, ns_, "w").ok());
  EXPECT_TRUE(WaitFor([&] { std::lock_guard l(mu); return seen.size() >= 3; }, 20s));
  const auto stop_at = Clock::now();
  stop.request_stop();
  watcher.join();
  EXPECT_LT(Clock::now() - stop_at, 5s);  // the progress callback notices the stop flag
  EXPECT_TRUE(result.IsCancelled()) << result.ToString();
  std::lock_guard l(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED w", "MODIFIED w", "DELETED w"}));
}

TEST_F(KubeIntegrationTest, InformerSurvivesApiServerRestart) {
  const Resource& cms = resources::kConfigMaps;
  ASSERT_TRUE(client_->Create(cms, ns_, ConfigMap("before", {}, {{"app", "kit"}})).ok());
  InformerOptions io;
  io.namespace_ = ns_;
  io.label_selector = "app=kit";  // not the kube-root-ca.crt the controller manager adds
  // Every namespace gets kube-root-ca.crt from the controller manager; count only ours.
  io.field_selector = "metadata.name!=kube-root-ca.crt";
  io.backoff = BackoffPolicy{200ms, 2000ms, 2.0, 0.2};
  Informer informer(client_, cms, io);
  std::atomic<int> adds{0};
  informer.AddEventHandlers({[&](const ObjectPtr&) { ++adds; }, nullptr, nullptr});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(20s));
  EXPECT_NE(informer.store().Get(ns_, "before"), nullptr);

  RestartApiServer();
  // The client retries while the API server comes back; the informer reconnects on its own.
  auto created = client_->Create(cms, ns_, ConfigMap("after", {}, {{"app", "kit"}}));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE(WaitFor([&] { return informer.store().Get(ns_, "after") != nullptr; }, 60s))
      << "watch restarts " << informer.watch_restarts() << ", relists " << informer.relists();
  EXPECT_GE(informer.watch_restarts(), 1);
  EXPECT_EQ(informer.store().size(), 2u);
  informer.Stop();
}

TEST_F(KubeIntegrationTest, InformerRelistsAfterEtcdCompactionAndRestart) {
  const Resource& cms = resources::kConfigMaps;
  ASSERT_TRUE(client_->Create(cms, ns_, ConfigMap("old", {}, {{"app", "kit"}})).ok());
  InformerOptions io;
  io.namespace_ = ns_;
  io.label_selector = "app=kit";  // not the kube-root-ca.crt the controller manager adds
  io.backoff = BackoffPolicy{200ms, 2000ms, 2.0, 0.2};
  Informer informer(client_, cms, io);
  std::atomic<int> deletes{0};
  informer.AddEventHandlers({nullptr, nullptr, [&](const ObjectPtr&) { ++deletes; }});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(20s));

  // Move etcd past the informer's resourceVersion and compact everything before it, through
  // etcd's HTTP gateway; after the restart the API server's watch cache starts later than the
  // informer's resourceVersion, so its rewatch gets 410 Gone and it must relist.
  CompactEtcd();
  RestartApiServer();
  ASSERT_TRUE(client_->Create(cms, ns_, ConfigMap("new", {}, {{"app", "kit"}})).ok());
  ASSERT_TRUE(client_->Delete(cms, ns_, "old").ok());
  EXPECT_TRUE(WaitFor([&] { return informer.relists() >= 1; }, 60s))
      << "watch restarts " << informer.watch_restarts();
  EXPECT_TRUE(WaitFor(
      [&] { return informer.store().Get(ns_, "new") != nullptr && informer.store().Get(ns_, "old") == nullptr; }, 60s));
  EXPECT_EQ(deletes.load(), 1);
  informer.Stop();

  // The same through a bare watch: a resourceVersion older than the restarted API server's
  // watch cache is answered with 410 Expired (as an ERROR event), never a silent stream.
  int events = 0;
  WatchOptions wo;
  wo.resource_version = "1";
  std::stop_source guard;  // ends the test instead of hanging if the server were to accept
  std::jthread timer([&](std::stop_token self) {
    if (SleepFor(30s, self)) guard.request_stop();
  });
  Status s = client_->Watch(cms, ns_, wo, [&](WatchEvent&&) { ++events; return true; }, guard.get_token());
  timer.request_stop();
  EXPECT_TRUE(s.IsGone()) << s.ToString();
  EXPECT_EQ(events, 0);
}

// Runs the demo binary with stdout to a file.
struct Process {
  pid_t pid = -1;
  std::string out;

  static Process Start(const std::vector<std::string>& args, const std::string& out_path) {
    Process p;
    p.out = out_path;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (posix_spawn(&p.pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) p.pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    return p;
  }
  bool Printed(const std::string& text) const { return ReadAll(out).find(text) != std::string::npos; }
  int Wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
  ~Process() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

TEST_F(KubeIntegrationTest, LeaderElectionTakeoverAfterSigkill) {
  constexpr auto kLeaseDuration = 4000ms;
  constexpr auto kRetryPeriod = 500ms;
  auto args = [&](const std::string& id) {
    return std::vector<std::string>{KUBE_LEADER_DEMO, "--kubeconfig", kubeconfig_, "--namespace", ns_,
                                    "--lease", "demo-leader", "--identity", id,
                                    "--lease-duration-ms", std::to_string(kLeaseDuration.count()),
                                    "--renew-deadline-ms", "3000",
                                    "--retry-period-ms", std::to_string(kRetryPeriod.count())};
  };
  auto holder = [&]() -> std::string {
    auto lease = client_->Get(resources::kLeases, ns_, "demo-leader");
    return lease.ok() ? lease->value("/spec/holderIdentity"_json_pointer, std::string()) : "<none>";
  };
  auto renew_time = [&]() -> std::string {
    auto lease = client_->Get(resources::kLeases, ns_, "demo-leader");
    return lease.ok() ? lease->value("/spec/renewTime"_json_pointer, std::string()) : "";
  };
  const std::string tmp = ::testing::TempDir();
  Process a = Process::Start(args("first"), tmp + "/leader-first.out");
  ASSERT_GT(a.pid, 0);
  ASSERT_TRUE(WaitFor([&] { return holder() == "first"; }, 20s));
  EXPECT_TRUE(WaitFor([&] { return a.Printed("LEADING first"); }, 5s));

  Process b = Process::Start(args("second"), tmp + "/leader-second.out");
  ASSERT_GT(b.pid, 0);
  ASSERT_TRUE(WaitFor([&] { return b.Printed("LEADER first"); }, 10s)) << ReadAll(b.out);
  // The first keeps renewing and the second keeps waiting.
  const std::string renewed = renew_time();
  ASSERT_TRUE(WaitFor([&] { return renew_time() != renewed; }, 5s));
  EXPECT_EQ(holder(), "first");
  EXPECT_FALSE(b.Printed("LEADING second"));

  kill(a.pid, SIGKILL);
  a.Wait();
  const auto killed_at = Clock::now();
  ASSERT_TRUE(WaitFor([&] { return holder() == "second"; }, 20s));
  const auto takeover = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at);
  std::printf("takeover after SIGKILL: %lld ms (lease duration %lld ms)\n", static_cast<long long>(takeover.count()),
              static_cast<long long>(kLeaseDuration.count()));
  // Expiry is judged from when the second last saw the lease change, at most one retry
  // period before the kill, and it looks again every retry period (+20% jitter).
  EXPECT_LE(takeover, kLeaseDuration + 2 * kRetryPeriod);
  EXPECT_TRUE(WaitFor([&] { return b.Printed("LEADING second"); }, 5s));

  // A clean shutdown hands the lease back at once.
  kill(b.pid, SIGTERM);
  int status = b.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(holder(), "");
  EXPECT_TRUE(b.Printed("STOPPED second"));
}

}  // namespace
}  // namespace kube
