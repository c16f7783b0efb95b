// nccl-operator against a real kube-apiserver + kube-controller-manager. No kubelet runs:
// the test writes pod status the way a kubelet would and annotates the root pod the way its
// sidecar would. Every test has its own namespace and its own operator (--namespace).
#include <algorithm>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "api/nccl_job.h"
#include "contract/release_version.h"
#include "desired/env_configmap.h"
#include "operator_process.h"
#include "testsupport/controlplane.h"

namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using testsupport::RunKubectl;
using testsupport::WaitFor;

constexpr auto kTimeout = 30s;

std::string Shell(const std::string& s) { return "'" + s + "'"; }  // our inputs hold no quotes

Json GetJson(const std::string& args) {
  auto r = RunKubectl("get " + args + " -o json");
  if (r.exit_code != 0) return Json();
  return Json::parse(r.output, nullptr, false);
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = testsupport::ControlPlaneDir() + "/optest-" + name;
  std::ofstream(path) << text;
  return path;
}

testsupport::CommandResult Apply(const std::string& ns, const std::string& yaml, const std::string& name = "job.yaml") {
  return RunKubectl("apply -n " + ns + " -f " + WriteTemp(ns + "-" + name, yaml));
}

std::string JobYaml(const std::string& name, int replicas, const std::string& extra_spec = "") {
  return "apiVersion: nccl.dev/v1alpha1\nkind: NcclJob\nmetadata:\n  name: " + name +
         "\nspec:\n  replicas: " + std::to_string(replicas) + "\n  gpusPerPod: 2\n" + extra_spec +
         "  template:\n    spec:\n      containers:\n      - name: trainer\n        image: trainer:1\n";
}

// Pods of `job` (owned ones) in `ns`.
std::vector<Json> Pods(const std::string& ns, const std::string& job) {
  Json list = GetJson("pods -n " + ns + " -l nccl.dev/job-name=" + job);
  std::vector<Json> out;
  if (list.is_object()) {
    for (Json& p : list["items"]) {
      if (!p["metadata"].contains("deletionTimestamp")) out.push_back(p);
    }
  }
  return out;
}

Json Status(const std::string& ns, const std::string& job) {
  Json j = GetJson("nj " + job + " -n " + ns);
  return j.is_object() ? j.value("status", Json::object()) : Json();
}

std::string ConditionReason(const Json& status, const std::string& type) {
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c.value("type", "") == type && c.value("status", "") == "True") return c.value("reason", "");
  }
  return "";
}

// Plays the kubelet: the trainer container of pod `name` terminated with `exit_code`.
void Terminate(const std::string& ns, const std::string& name, int exit_code) {
  Json patch = {{"status",
                 {{"phase", exit_code == 0 ? "Succeeded" : "Failed"},
                  {"containerStatuses",
                   Json::array({{{"name", "trainer"},
                                 {"image", "trainer:1"},
                                 {"imageID", ""},
                                 {"ready", false},
                                 {"restartCount", 0},
                                 {"state", {{"terminated", {{"exitCode", exit_code}, {"reason", exit_code ? "Error" : "Completed"}}}}}}})}}}};
  auto r = RunKubectl("patch pod " + name + " -n " + ns + " --subresource=status --type=merge -p " + Shell(patch.dump()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

// Plays the kubelet of a pod that restarts in place: its sidecar ready (serving) and its trainer
// running after `restarts` restarts; the last one ended with `last_exit` (none when restarts is 0).
void RunInPlace(const std::string& ns, const std::string& name, int restarts, int last_exit = 137) {
  Json last = restarts == 0 ? Json::object() : Json{{"terminated", {{"exitCode", last_exit}, {"reason", "Error"}}}};
  Json status = {{"phase", "Running"},
                 {"initContainerStatuses",
                  Json::array({{{"name", "nccl-sidecar"}, {"image", "nccl-sidecar:1"}, {"imageID", ""}, {"ready", true},
                                {"started", true}, {"restartCount", restarts},
                                {"state", {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}}},
                                {"lastState", restarts == 0 ? Json::object() : Json{{"terminated", {{"exitCode", 137}}}}}}})},
                 {"containerStatuses",
                  Json::array({{{"name", "trainer"}, {"image", "trainer:1"}, {"imageID", ""}, {"ready", true},
                                {"restartCount", restarts}, {"state", {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}}},
                                {"lastState", last}}})}};
  auto r = RunKubectl("patch pod " + name + " -n " + ns + " --subresource=status --type=merge -p " +
                      Shell(Json{{"status", status}}.dump()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

// The port an operator started with --log-format=json serves `what` on ("serving metrics",
// "serving health probes"), read from its log line; "" when it never says so.
std::string ServingPort(optest::OperatorProcess& op, const std::string& what) {
  if (!WaitFor([&] { return op.Log().find(what) != std::string::npos; }, kTimeout)) return "";
  std::string log = op.Log();
  auto at = log.find(what);
  auto line_start = log.rfind('\n', at);
  auto addr = log.find("127.0.0.1:", line_start == std::string::npos ? 0 : line_start);
  return log.substr(addr + 10, log.find('"', addr) - addr - 10);
}

// The operator's PUT requests so far, all status codes (ncclop_api_requests_total).
int PutRequests(const std::string& metrics_port) {
  auto r = testsupport::Run("curl -sf http://127.0.0.1:" + metrics_port + "/metrics");
  const std::string series = "ncclop_api_requests_total{verb=\"PUT\"";
  int n = 0;
  for (std::size_t at = r.output.find(series); at != std::string::npos; at = r.output.find(series, at + 1)) {
    const std::size_t end = r.output.find('\n', at);
    n += std::stoi(r.output.substr(r.output.rfind(' ', end) + 1));
  }
  return n;
}

class OperatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = RunKubectl(std::string("apply --server-side --force-conflicts -f ") + NCCLOP_CRD_FILE);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // kubectl wait errs at once while a just-made CRD has no status conditions yet: asked again
    // until it answers, within a minute.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    do {
      r = RunKubectl("wait --for=condition=Established crd/nccljobs.nccl.dev --timeout=60s");
      if (r.exit_code == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    } while (std::chrono::steady_clock::now() < deadline);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string n = std::string(info->name());
    for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
    // A fresh name per run: a namespace of an earlier run may still be terminating.
    ns_ = ("op-" + n).substr(0, 44) + "-" + std::to_string(getpid() % 100000);
    auto r = RunKubectl("create namespace " + ns_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  void TearDown() override {
    if (HasFailure()) {
      for (auto& op : operators_) std::cerr << "---- operator log ----\n" << op->Log() << "\n";
    }
    operators_.clear();
    RunKubectl("delete namespace " + ns_ + " --wait=false");
  }

  optest::OperatorProcess& StartOperator(std::vector<std::string> extra = {}, std::vector<std::string> env = {}) {
    std::vector<std::string> args = {NCCLOP_OPERATOR_BIN, "--kubeconfig=" + testsupport::Kubeconfig(),
                                     "--namespace=" + ns_, "--metrics-bind-address=127.0.0.1:0",
                                     "--health-probe-bind-address=127.0.0.1:0", "--log-level=debug"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string log = testsupport::ControlPlaneDir() + "/optest-" + ns_ + "-operator-" +
                      std::to_string(operators_.size()) + ".log";
    std::remove(log.c_str());
    operators_.push_back(std::make_unique<optest::OperatorProcess>(args, log, std::move(env)));
    return *operators_.back();
  }

  bool WaitForPods(const std::string& job, int n, int attempt) {
    return WaitFor([&] {
      auto pods = Pods(ns_, job);
      if (static_cast<int>(pods.size()) != n) return false;
      for (const Json& p : pods) {
        if (p["metadata"]["labels"].value("nccl.dev/attempt", "") != std::to_string(attempt)) return false;
      }
      return true;
    }, kTimeout);
  }

  std::string ns_;
  std::vector<std::unique_ptr<optest::OperatorProcess>> operators_;
};

TEST_F(OperatorTest, CreatesConfigMapServiceRbacAndPodsWithTheContract) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("demo", 4)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("demo", 4, 1));

  Json job = GetJson("nj demo -n " + ns_);
  const std::string uid = job["metadata"]["uid"];
  auto owned = [&](const Json& obj) {
    const Json& ref = obj["metadata"]["ownerReferences"][0];
    return ref["uid"] == uid && ref["controller"] == true && ref["blockOwnerDeletion"] == true;
  };

  Json cm = GetJson("cm demo-nccl -n " + ns_);
  EXPECT_EQ(cm["data"]["attempt"], "1");
  EXPECT_EQ(cm["data"]["jobUID"], uid);
  EXPECT_FALSE(cm["data"].contains("uniqueId"));
  EXPECT_TRUE(owned(cm));

  Json svc = GetJson("svc demo -n " + ns_);
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_TRUE(owned(svc));

  Json role = GetJson("role demo-nccl -n " + ns_);
  EXPECT_EQ(role["rules"][0]["resourceNames"], Json::array({"demo-nccl"}));
  EXPECT_EQ(role["rules"][1]["resourceNames"], Json::array({"demo-0"}));
  EXPECT_TRUE(owned(role));
  EXPECT_TRUE(owned(GetJson("rolebinding demo-nccl -n " + ns_)));
  EXPECT_TRUE(owned(GetJson("sa demo-nccl -n " + ns_)));

  // The job's share of the env contract, once for all its pods.
  const std::string env_name = Pods(ns_, "demo").at(0)["spec"]["containers"][0]["envFrom"].back()["configMapRef"]["name"];
  EXPECT_EQ(env_name.rfind("demo-nccl-env-", 0), 0u) << env_name;
  Json job_env = GetJson("cm " + env_name + " -n " + ns_);
  EXPECT_EQ(job_env["data"]["NCCLJOB_UID"], uid);
  EXPECT_EQ(job_env["immutable"], true);
  EXPECT_TRUE(owned(job_env));

  std::set<std::string> names;
  for (const Json& pod : Pods(ns_, "demo")) {
    names.insert(pod["metadata"]["name"]);
    EXPECT_TRUE(owned(pod));
    const Json& spec = pod["spec"];
    EXPECT_EQ(spec["subdomain"], "demo");
    EXPECT_EQ(spec["hostname"], pod["metadata"]["name"]);
    EXPECT_EQ(spec["serviceAccountName"], "demo-nccl");
    EXPECT_EQ(spec["restartPolicy"], "Never");
    EXPECT_EQ(spec["initContainers"][0]["name"], "nccl-sidecar");
    EXPECT_EQ(spec["initContainers"][0]["restartPolicy"], "Always");
    EXPECT_EQ(spec["initContainers"][0]["image"], "nccl-sidecar:" + std::string(contract::kReleaseVersion));
    EXPECT_EQ(spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "2");
    // What the trainer sees: the job's ConfigMap by envFrom (its last source), then its env.
    const Json& trainer = spec["containers"][0];
    ASSERT_TRUE(trainer.contains("envFrom")) << trainer.dump();
    EXPECT_EQ(trainer["envFrom"].back()["configMapRef"]["name"], env_name);
    std::map<std::string, std::string> env = job_env["data"].get<std::map<std::string, std::string>>();
    for (const Json& v : trainer["env"]) env[v["name"]] = v.value("value", "<ref>");
    EXPECT_EQ(env["NCCLJOB_INDEX"], pod["metadata"]["labels"]["nccl.dev/index"]);
    EXPECT_EQ(env["NCCLJOB_WORLD_SIZE"], "8");
    EXPECT_EQ(env["NCCLJOB_ATTEMPT"], "1");
    EXPECT_EQ(env["MASTER_ADDR"], "demo-0.demo." + ns_ + ".svc");
  }
  EXPECT_EQ(names, (std::set<std::string>{"demo-0", "demo-1", "demo-2", "demo-3"}));

  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "demo").value("state", "") == "Pending"; }, kTimeout));
  auto table = RunKubectl("get nj -n " + ns_);
  for (const char* column : {"NAME", "REPLICAS", "READY", "STATE", "RESTARTS", "AGE", "Pending"}) {
    EXPECT_NE(table.output.find(column), std::string::npos) << column << " missing in:\n" << table.output;
  }
}

TEST_F(OperatorTest, TheTemplatesServiceAccountIsKeptAndBoundAndCannotChange) {
  const std::string sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: trainer\n  annotations:\n"
                         "    eks.amazonaws.com/role-arn: arn:aws:iam::111122223333:role/trainer\n";
  ASSERT_EQ(Apply(ns_, sa, "sa.yaml").exit_code, 0);
  StartOperator();
  std::string yaml = JobYaml("irsa", 2);
  yaml.replace(yaml.find("      containers:"), 0, "      serviceAccountName: trainer\n");
  ASSERT_EQ(Apply(ns_, yaml).exit_code, 0);
  ASSERT_TRUE(WaitForPods("irsa", 2, 1));
  for (const Json& pod : Pods(ns_, "irsa")) EXPECT_EQ(pod["spec"]["serviceAccountName"], "trainer");
  Json binding = GetJson("rolebinding irsa-nccl -n " + ns_);
  EXPECT_EQ(binding["subjects"], Json::array({{{"kind", "ServiceAccount"}, {"name", "trainer"}, {"namespace", ns_}}}));
  EXPECT_EQ(RunKubectl("get sa irsa-nccl -n " + ns_).exit_code, 1) << "no per-job ServiceAccount";
  Json kept = GetJson("sa trainer -n " + ns_);
  EXPECT_EQ(kept["metadata"]["annotations"]["eks.amazonaws.com/role-arn"], "arn:aws:iam::111122223333:role/trainer");
  EXPECT_FALSE(kept["metadata"].contains("ownerReferences")) << "the user's ServiceAccount is never adopted";

  auto changed = RunKubectl("patch nj irsa -n " + ns_ +
                            " --type=merge -p '{\"spec\":{\"template\":{\"spec\":{\"serviceAccountName\":\"other\"}}}}'");
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_NE(changed.output.find("serviceAccountName is immutable"), std::string::npos) << changed.output;
}

TEST_F(OperatorTest, TwoHostNetworkJobsGetSidecarPortsOfTheirOwn) {
  StartOperator();
  std::map<std::string, int> api_port;
  for (const char* job : {"hna", "hnb"}) {
    std::string yaml = JobYaml(job, 2);
    yaml.replace(yaml.find("      containers:"), 0, "      hostNetwork: true\n");
    ASSERT_EQ(Apply(ns_, yaml, std::string(job) + ".yaml").exit_code, 0);
    ASSERT_TRUE(WaitForPods(job, 2, 1));
    for (const Json& pod : Pods(ns_, job)) {
      const Json& sidecar = pod["spec"]["initContainers"][0];
      const int port = sidecar["ports"][0]["containerPort"];
      // The API server gives hostNetwork pods hostPort = containerPort: the scheduler keeps
      // two pods wanting one port off one node, so distinct ports are what lets them share it.
      EXPECT_EQ(sidecar["ports"][0]["hostPort"], port);
      EXPECT_EQ(sidecar["readinessProbe"]["httpGet"]["port"], port + 1);
      std::map<std::string, std::string> env;
      for (const Json& v : pod["spec"]["containers"][0]["env"]) env[v["name"]] = v.value("value", "");
      EXPECT_EQ(env["NCCLJOB_SIDECAR_URL"], "http://127.0.0.1:" + std::to_string(port));
      EXPECT_GE(port, 20000);
      api_port[job] = port;
    }
  }
  EXPECT_NE(api_port["hna"], api_port["hnb"]);
}

TEST_F(OperatorTest, PublishesTheRootsIdForTheCurrentAttemptOnly) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("pub", 2)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("pub", 2, 1));
  // An annotation naming another attempt is ignored.
  ASSERT_EQ(RunKubectl("annotate pod pub-0 -n " + ns_ + " nccl.dev/unique-id=T0xE nccl.dev/unique-id-attempt=7").exit_code, 0);
  ASSERT_EQ(RunKubectl("annotate pod pub-1 -n " + ns_ + " nccl.dev/unique-id=Tk9U nccl.dev/unique-id-attempt=1").exit_code, 0);
  ASSERT_EQ(RunKubectl("annotate --overwrite pod pub-0 -n " + ns_ + " nccl.dev/unique-id=UklHSFQ= nccl.dev/unique-id-attempt=1").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return GetJson("cm pub-nccl -n " + ns_)["data"].value("uniqueId", "") != ""; }, kTimeout));
  Json cm = GetJson("cm pub-nccl -n " + ns_);
  EXPECT_EQ(cm["data"]["uniqueId"], "UklHSFQ=");
  EXPECT_EQ(cm["data"]["attempt"], "1");
  EXPECT_FALSE(cm["data"].value("publishedAt", "").empty());
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "pub").contains("idPublishedTime"); }, kTimeout));
  EXPECT_EQ(ConditionReason(Status(ns_, "pub"), "IdPublished"), "Published");
  EXPECT_EQ(operators_[0]->Log().find("UklHSFQ="), std::string::npos) << "the operator logged the id";
}

// The root's id arrives while the reconcile that creates the attempt's pods still runs: the
// fast path publishes it, the full reconcile records status and the event, each once.
TEST_F(OperatorTest, PublishesOnceWhileALargeAttemptIsStillBeingCreated) {
  constexpr int kReplicas = 300;
  auto& op = StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("big", kReplicas)).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return RunKubectl("get pod big-0 -n " + ns_).exit_code == 0; }, kTimeout));
  ASSERT_EQ(RunKubectl("annotate pod big-0 -n " + ns_ + " nccl.dev/unique-id=QklH nccl.dev/unique-id-attempt=1").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return GetJson("cm big-nccl -n " + ns_)["data"].value("uniqueId", "") == "QklH"; }, kTimeout));
  std::cerr << "pods when the id was published: " << Pods(ns_, "big").size() << " of " << kReplicas
            << (op.Log().find("published the id (fast path)") != std::string::npos ? " (fast path)" : " (full reconcile)")
            << "\n";
  ASSERT_TRUE(WaitForPods("big", kReplicas, 1));
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "big").contains("idPublishedTime"); }, kTimeout));
  EXPECT_EQ(ConditionReason(Status(ns_, "big"), "IdPublished"), "Published");
  auto published_events = [&] {
    Json events = GetJson("events -n " + ns_ + " --field-selector involvedObject.name=big,reason=IdPublished");
    return events.is_object() ? events["items"].size() : 0u;
  };
  ASSERT_TRUE(WaitFor([&] { return published_events() >= 1; }, kTimeout));
  EXPECT_EQ(published_events(), 1u) << "announced by both paths";
  EXPECT_EQ(op.Log().find("disappeared"), std::string::npos) << "pods still being created failed the attempt";
}

TEST_F(OperatorTest, AFailedPodEndsTheAttemptAndTheNextGetsFreshPodsAndNoId) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("rs", 3, "  failurePolicy:\n    backoffSeconds: 0\n")).exit_code, 0);
  ASSERT_TRUE(WaitForPods("rs", 3, 1));
  ASSERT_EQ(RunKubectl("annotate pod rs-0 -n " + ns_ + " nccl.dev/unique-id=QQ== nccl.dev/unique-id-attempt=1").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return GetJson("cm rs-nccl -n " + ns_)["data"].contains("uniqueId"); }, kTimeout));
  std::string old_uid = Pods(ns_, "rs")[0]["metadata"]["uid"];

  Terminate(ns_, "rs-1", 1);
  ASSERT_TRUE(WaitForPods("rs", 3, 2)) << RunKubectl("get pods -n " + ns_ + " --show-labels").output;
  Json status = Status(ns_, "rs");
  EXPECT_EQ(status["attempt"], 2);
  EXPECT_EQ(status["restarts"], 1);
  EXPECT_FALSE(status.contains("idPublishedTime"));
  Json cm = GetJson("cm rs-nccl -n " + ns_);
  EXPECT_EQ(cm["data"]["attempt"], "2");
  EXPECT_FALSE(cm["data"].contains("uniqueId")) << "an old id must never reach a new attempt";
  for (const Json& p : Pods(ns_, "rs")) EXPECT_NE(p["metadata"]["uid"], old_uid);
  auto events = RunKubectl("get events -n " + ns_ + " --field-selector involvedObject.name=rs");
  EXPECT_NE(events.output.find("Restarting"), std::string::npos) << events.output;
  EXPECT_NE(events.output.find("rs-1"), std::string::npos) << "the event says which pod failed:\n" << events.output;
}

// A pod evicted while no kubelet runs it (unscheduled) is gone within milliseconds; with the
// operator paused meanwhile, its first reconcile after finds it gone, the disruption only in the
// delete event. It still counts as a disruption (restarts 0), not as a pod that disappeared.
TEST_F(OperatorTest, APodEvictedAndGoneAtOnceIsADisruptionNotARestart) {
  auto& op = StartOperator();
  const std::string policy = "  failurePolicy:\n    backoffSeconds: 0\n    maxRestarts: 0\n";
  ASSERT_EQ(Apply(ns_, JobYaml("ev", 3, policy)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("ev", 3, 1));
  auto id = RunKubectl("annotate pod ev-0 -n " + ns_ + " nccl.dev/unique-id=QQ== nccl.dev/unique-id-attempt=1");
  ASSERT_EQ(id.exit_code, 0) << id.output;
  ASSERT_TRUE(WaitFor([&] { return GetJson("cm ev-nccl -n " + ns_)["data"].contains("uniqueId"); }, kTimeout));

  const std::string eviction =
      R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"ev-1","namespace":")" + ns_ + R"("}})";
  op.Pause();
  auto evicted = RunKubectl("create --raw /api/v1/namespaces/" + ns_ + "/pods/ev-1/eviction -f " +
                            WriteTemp(ns_ + "-eviction", eviction));
  const bool gone = WaitFor([&] { return RunKubectl("get pod ev-1 -n " + ns_).exit_code != 0; }, kTimeout);
  op.Resume();
  ASSERT_EQ(evicted.exit_code, 0) << evicted.output;
  ASSERT_TRUE(gone);
  ASSERT_TRUE(WaitForPods("ev", 3, 2)) << RunKubectl("get pods -n " + ns_ + " --show-labels").output;
  Json status = Status(ns_, "ev");
  EXPECT_EQ(status["attempt"], 2);
  EXPECT_EQ(status["restarts"], 0) << "maxRestarts 0: a restart would have failed the job";
  EXPECT_EQ(status["disruptions"], 1);
  auto events = RunKubectl("get events -n " + ns_ + " --field-selector involvedObject.name=ev,reason=Restarting "
                           "-o jsonpath={.items[*].message}");
  EXPECT_NE(events.output.find("was disrupted (Eviction: pod ev-1 was evicted through the Eviction API"),
            std::string::npos)
      << events.output;
}

TEST_F(OperatorTest, AnAttemptRestartedInPlaceKeepsItsPodsAndPublishesOnlyOnceEveryPodRestarted) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("ip", 3, "  failurePolicy:\n    backoffSeconds: 0\n    restartStrategy: InPlace\n")).exit_code, 0);
  ASSERT_TRUE(WaitForPods("ip", 3, 1));
  std::vector<std::string> uids;
  for (const Json& p : Pods(ns_, "ip")) {
    uids.push_back(p["metadata"]["uid"]);
    // The API server kept the rules the kubelet acts on.
    EXPECT_EQ(p["spec"]["initContainers"][0]["restartPolicyRules"][0]["action"], "RestartAllContainers");
    EXPECT_EQ(p["spec"]["containers"][0]["restartPolicyRules"][0]["exitCodes"]["operator"], "NotIn");
    EXPECT_EQ(p["metadata"]["annotations"]["nccl.dev/restarts-before-attempt"], "0");
  }
  for (int i = 0; i < 3; ++i) RunInPlace(ns_, "ip-" + std::to_string(i), 0);
  ASSERT_EQ(RunKubectl("annotate pod ip-0 -n " + ns_ + " nccl.dev/unique-id=QQ== nccl.dev/unique-id-attempt=1").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return GetJson("cm ip-nccl -n " + ns_)["data"].contains("uniqueId"); }, kTimeout));
  EXPECT_EQ(Status(ns_, "ip")["restartStrategy"], "InPlace");

  // ip-1's trainer exits 3; its kubelet restarts the pod in place at once.
  RunInPlace(ns_, "ip-1", 1, 3);
  ASSERT_TRUE(WaitForPods("ip", 3, 2)) << RunKubectl("get pods -n " + ns_ + " --show-labels").output;
  Json status = Status(ns_, "ip");
  EXPECT_EQ(status["attempt"], 2);
  EXPECT_EQ(status["restarts"], 1);
  std::vector<std::string> kept;
  for (const Json& p : Pods(ns_, "ip")) {
    kept.push_back(p["metadata"]["uid"]);
    EXPECT_EQ(p["metadata"]["annotations"]["nccl.dev/restarts-before-attempt"], "1") << p["metadata"]["name"];
  }
  std::sort(uids.begin(), uids.end());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, uids) << "no pod was made again";
  Json cm = GetJson("cm ip-nccl -n " + ns_);
  EXPECT_EQ(cm["data"]["attempt"], "2");
  EXPECT_FALSE(cm["data"].contains("uniqueId"));
  auto events = RunKubectl("get events -n " + ns_ + " --field-selector involvedObject.name=ip");
  EXPECT_NE(events.output.find("trainer exited with code 3"), std::string::npos) << events.output;
  EXPECT_NE(events.output.find("in place"), std::string::npos) << events.output;

  // The root's new trainer posts attempt 2's id while ip-2 still runs attempt 1's trainer.
  RunInPlace(ns_, "ip-0", 1);
  ASSERT_EQ(RunKubectl("annotate --overwrite pod ip-0 -n " + ns_ + " nccl.dev/unique-id=Qg== nccl.dev/unique-id-attempt=2").exit_code, 0);
  EXPECT_FALSE(WaitFor([&] { return GetJson("cm ip-nccl -n " + ns_)["data"].contains("uniqueId"); }, std::chrono::seconds(3)))
      << "published before ip-2 restarted for attempt 2";
  RunInPlace(ns_, "ip-2", 1);
  ASSERT_TRUE(WaitFor([&] { return GetJson("cm ip-nccl -n " + ns_)["data"].value("uniqueId", "") == "Qg=="; }, kTimeout));
  EXPECT_EQ(Status(ns_, "ip")["restarts"], 1) << "the restarts that moved the pods are no failures";
}

// The pods' statuses change the job's counts alone (ready, active, the running count in the
// Running condition) until every pod runs: those are written at most once per
// --status-counts-interval-seconds, the newest always; the state Running is written at once.
TEST_F(OperatorTest, PodCountsAloneAreWrittenAtMostOncePerIntervalAndTheNewestAlways) {
  auto& op = StartOperator({"--log-format=json", "--status-counts-interval-seconds=8"});
  const std::string metrics_port = ServingPort(op, "serving metrics");
  ASSERT_FALSE(metrics_port.empty()) << op.Log();
  ASSERT_EQ(Apply(ns_, JobYaml("pace", 4)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("pace", 4, 1));
  // The attempt was written before its pods existed; their count follows within the interval.
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "pace").value("active", 0) == 4; }, kTimeout)) << Status(ns_, "pace").dump();

  const int puts_before = PutRequests(metrics_port);
  for (int i = 0; i < 3; ++i) RunInPlace(ns_, "pace-" + std::to_string(i), 0);  // 1, 2, 3 of 4 running
  RunInPlace(ns_, "pace-3", 0);  // all running: the state changes
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "pace").value("state", "") == "Running"; }, kTimeout));
  EXPECT_LE(PutRequests(metrics_port) - puts_before, 2)
      << "one write for the state (and one for the counts if the interval was over), not one per pod";

  // The newest count is written when the interval is over, with no event to bring it.
  auto ready = RunKubectl("patch pod pace-0 -n " + ns_ + " --subresource=status --type=merge -p " +
                          Shell(R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})"));
  ASSERT_EQ(ready.exit_code, 0) << ready.output;
  EXPECT_TRUE(WaitFor([&] { return Status(ns_, "pace").value("ready", 0) == 1; }, kTimeout)) << Status(ns_, "pace").dump();
}

TEST_F(OperatorTest, APodTheApiServerRefusesAsMalformedFailsTheJobWithItsMessage) {
  StartOperator();
  // Passes the CRD's schema (a volumeMount of no volume is for the pod's validation to find) but not the
  // API server's pod validation.
  const std::string yaml =
      "apiVersion: nccl.dev/v1alpha1\nkind: NcclJob\nmetadata:\n  name: badtpl\nspec:\n  replicas: 3\n"
      "  template:\n    spec:\n      containers:\n      - name: trainer\n        image: trainer:1\n"
      "        volumeMounts:\n        - name: data\n          mountPath: /data\n";
  ASSERT_EQ(Apply(ns_, yaml, "badtpl.yaml").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "badtpl").value("state", "") == "Failed"; }, kTimeout))
      << RunKubectl("get nj badtpl -n " + ns_ + " -o yaml").output;
  Json status = Status(ns_, "badtpl");
  EXPECT_EQ(ConditionReason(status, "Failed"), "PodTemplateRejected");
  std::string message;
  for (const Json& c : status["conditions"]) {
    if (c.value("type", "") == "Failed") message = c.value("message", "");
  }
  EXPECT_NE(message.find("volumeMounts"), std::string::npos) << "the API server's reason is kept: " << message;
  EXPECT_TRUE(Pods(ns_, "badtpl").empty());
  auto events = RunKubectl("get events -n " + ns_ + " --field-selector involvedObject.name=badtpl");
  EXPECT_NE(events.output.find("PodTemplateRejected"), std::string::npos) << events.output;
}

TEST_F(OperatorTest, AForbiddenPodCreateIsRetriedAndItsEventCounted) {
  // Pod Security admission enforcing "restricted": the job's pods (no seccomp profile, root
  // allowed) are Forbidden, which a policy change may lift, so the job waits and retries.
  ASSERT_EQ(RunKubectl("label namespace " + ns_ + " pod-security.kubernetes.io/enforce=restricted").exit_code, 0);
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("psa", 2)).exit_code, 0);
  auto forbidden_events = [&] {
    Json list = GetJson("events -n " + ns_ + " --field-selector involvedObject.name=psa,reason=PodCreateFailed");
    return list.is_object() ? list["items"] : Json::array();
  };
  ASSERT_TRUE(WaitFor([&] {
    Json items = forbidden_events();
    return items.size() == 1 && items[0].value("count", 0) >= 2;
  }, kTimeout)) << forbidden_events().dump();
  EXPECT_NE(forbidden_events()[0].value("message", "").find("will retry"), std::string::npos);
  EXPECT_NE(Status(ns_, "psa").value("state", ""), "Failed");

  ASSERT_EQ(RunKubectl("label namespace " + ns_ + " pod-security.kubernetes.io/enforce-").exit_code, 0);
  EXPECT_TRUE(WaitForPods("psa", 2, 1)) << "the retries go on until the policy allows the pods";
}

// A quota on ConfigMaps (or Services) refuses an object the job's pods need before any pod is
// made: the job says so in an event, and goes on once the quota lets it.
TEST_F(OperatorTest, AChildRefusedByAQuotaIsAWarningAndTheJobGoesOnOnceItPasses) {
  ASSERT_EQ(Apply(ns_, "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: cms\nspec:\n  hard:\n"
                       "    count/configmaps: \"100\"\n", "quota.yaml").exit_code, 0);
  std::string used;
  ASSERT_TRUE(WaitFor([&] {
    used = GetJson("resourcequota cms -n " + ns_)["status"].value("used", Json::object()).value("count/configmaps", "");
    return !used.empty();
  }, kTimeout)) << "the quota controller never counted the namespace's ConfigMaps";
  // Full: not one ConfigMap more.
  auto full = RunKubectl("patch resourcequota cms -n " + ns_ + " --type=merge -p '{\"spec\":{\"hard\":{\"count/configmaps\":\"" +
                         used + "\"}}}'");
  ASSERT_EQ(full.exit_code, 0) << full.output;
  ASSERT_TRUE(WaitFor([&] {
    return GetJson("resourcequota cms -n " + ns_)["status"].value("hard", Json::object()).value("count/configmaps", "") == used;
  }, kTimeout));
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("quota", 2)).exit_code, 0);
  std::string events;
  EXPECT_TRUE(WaitFor([&] {
    events = RunKubectl("get events -n " + ns_ + " --field-selector involvedObject.name=quota,reason=ChildCreateForbidden "
                        "-o jsonpath={.items[*].message}").output;
    return events.find("exceeded quota") != std::string::npos;
  }, kTimeout)) << events;
  EXPECT_EQ(Pods(ns_, "quota").size(), 0u) << "no pod before what it needs exists";
  auto room = RunKubectl("patch resourcequota cms -n " + ns_ + " --type=merge -p '{\"spec\":{\"hard\":{\"count/configmaps\":\"100\"}}}'");
  ASSERT_EQ(room.exit_code, 0) << room.output;
  EXPECT_TRUE(WaitForPods("quota", 2, 1));
}

TEST_F(OperatorTest, AForbiddenPodCreateFailsTheJobAfterForbiddenRetrySecondsWithTheApiServersMessage) {
  ASSERT_EQ(RunKubectl("label namespace " + ns_ + " pod-security.kubernetes.io/enforce=restricted").exit_code, 0);
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("psa", 2, "  failurePolicy:\n    forbiddenRetrySeconds: 5\n")).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "psa").value("state", "") == "Failed"; }, kTimeout))
      << RunKubectl("get nj psa -n " + ns_ + " -o yaml").output;
  Json status = Status(ns_, "psa");
  EXPECT_EQ(ConditionReason(status, "Failed"), "PodCreateForbidden");
  std::string message;
  for (const Json& c : status["conditions"]) {
    if (c.value("type", "") == "Failed") message = c.value("message", "");
  }
  EXPECT_NE(message.find("violates PodSecurity \"restricted"), std::string::npos) << message;
  EXPECT_NE(message.find("forbiddenRetrySeconds"), std::string::npos) << message;
  auto retried = RunKubectl("get events -n " + ns_ + " --field-selector involvedObject.name=psa,reason=PodCreateFailed -o name");
  EXPECT_FALSE(retried.output.empty()) << "retried before giving up";
  EXPECT_TRUE(Pods(ns_, "psa").empty());
}

TEST_F(OperatorTest, ActiveDeadlineSecondsFailsTheWholeJobAndDeletesItsPods) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("late", 2, "  activeDeadlineSeconds: 3\n")).exit_code, 0);
  ASSERT_TRUE(WaitForPods("late", 2, 1));
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "late").value("state", "") == "Failed"; }, kTimeout));
  EXPECT_EQ(ConditionReason(Status(ns_, "late"), "Failed"), "DeadlineExceeded");
  EXPECT_TRUE(WaitFor([&] { return Pods(ns_, "late").empty(); }, kTimeout)) << "its running pods are deleted";
}

TEST_F(OperatorTest, ExhaustedRestartsFailTheJobWithAReason) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("ex", 2, "  failurePolicy:\n    maxRestarts: 1\n    backoffSeconds: 0\n")).exit_code, 0);
  ASSERT_TRUE(WaitForPods("ex", 2, 1));
  Terminate(ns_, "ex-0", 1);
  ASSERT_TRUE(WaitForPods("ex", 2, 2));
  Terminate(ns_, "ex-1", 2);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "ex").value("state", "") == "Failed"; }, kTimeout));
  Json status = Status(ns_, "ex");
  EXPECT_EQ(ConditionReason(status, "Failed"), "MaxRestartsExceeded");
  EXPECT_EQ(status["attempt"], 2);
  EXPECT_EQ(status["restarts"], 1);
  EXPECT_TRUE(status.contains("completionTime"));
}

TEST_F(OperatorTest, FailFastExitCodeFailsAtOnce) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("ff", 2, "  failurePolicy:\n    failFastExitCodes: [42]\n")).exit_code, 0);
  ASSERT_TRUE(WaitForPods("ff", 2, 1));
  Terminate(ns_, "ff-1", 42);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "ff").value("state", "") == "Failed"; }, kTimeout));
  EXPECT_EQ(ConditionReason(Status(ns_, "ff"), "Failed"), "FailFastExitCode");
  EXPECT_EQ(Status(ns_, "ff")["restarts"], 0);
}

TEST_F(OperatorTest, SucceedsThenTtlDeletesTheJobAndTheGarbageCollectorItsChildren) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("ok", 2, "  ttlSecondsAfterFinished: 0\n")).exit_code, 0);
  ASSERT_TRUE(WaitForPods("ok", 2, 1));
  Terminate(ns_, "ok-0", 0);
  Terminate(ns_, "ok-1", 0);
  ASSERT_TRUE(WaitFor([&] { return RunKubectl("get nj ok -n " + ns_).exit_code != 0; }, kTimeout));
  // kube-controller-manager's garbage collector looks for new resource types (our CRD) every
  // 30 s, and may first meet the ConfigMap only after that: allow two of its periods and work.
  ASSERT_TRUE(WaitFor([&] { return RunKubectl("get cm ok-nccl -n " + ns_).exit_code != 0; }, 120s))
      << "kube-controller-manager's garbage collector should delete the owned ConfigMap";
  auto events = RunKubectl("get events -n " + ns_ + " --field-selector involvedObject.name=ok");
  EXPECT_NE(events.output.find("Succeeded"), std::string::npos) << events.output;
}

// A job created where a deleted job of the same name left its ConfigMap (orphaned, or not yet
// collected): that ConfigMap's attempt and id are not the new job's.
TEST_F(OperatorTest, AConfigMapLeftByADeletedJobOfTheSameNameIsTakenOverNotTrusted) {
  const std::string leftover =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: again-nccl\n"
      "data:\n  attempt: \"1\"\n  jobUID: uid-of-the-deleted-job\n  uniqueId: T0xE\n  publishedAt: \"2026-01-01T00:00:00Z\"\n";
  ASSERT_EQ(Apply(ns_, leftover, "leftover.yaml").exit_code, 0);
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("again", 2, "  failurePolicy:\n    maxRestarts: 0\n")).exit_code, 0);
  ASSERT_TRUE(WaitForPods("again", 2, 1));
  Json job = GetJson("nj again -n " + ns_);
  const std::string uid = job["metadata"]["uid"];
  ASSERT_TRUE(WaitFor([&] { return GetJson("cm again-nccl -n " + ns_)["data"].value("jobUID", "") == uid; }, kTimeout));
  Json cm = GetJson("cm again-nccl -n " + ns_);
  EXPECT_FALSE(cm["data"].contains("uniqueId")) << "the old job's id must not reach the new job: " << cm.dump();
  ASSERT_TRUE(cm["metadata"].contains("ownerReferences")) << cm.dump();
  EXPECT_EQ(cm["metadata"]["ownerReferences"][0]["uid"], uid);
  Json status = Status(ns_, "again");
  EXPECT_NE(status.value("state", ""), "Failed") << status.dump();
  EXPECT_FALSE(status.contains("idPublishedTime")) << status.dump();
}

// The job's env ConfigMap is immutable: one of its name with data that is not the job's (here
// made by hand before the operator saw the job) cannot be mended, so it is deleted and made
// again, and the pods read the job's values.
TEST_F(OperatorTest, AnEnvConfigMapOfTheJobsNameWithOtherDataIsMadeAgain) {
  auto& op = StartOperator();
  op.Pause();
  ASSERT_EQ(Apply(ns_, JobYaml("envcm", 2)).exit_code, 0);
  const Json job = GetJson("nj envcm -n " + ns_);
  const std::string uid = job["metadata"]["uid"];
  auto parsed = ncclop::api::ParseNcclJob(job);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const std::string name = ncclop::desired::EnvConfigMapName(*parsed);
  const std::string other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name +
                            "\ndata:\n  NCCLJOB_UID: someone-else\n  MASTER_ADDR: elsewhere\n";
  auto made = Apply(ns_, other, "other-env.yaml");
  op.Resume();
  ASSERT_EQ(made.exit_code, 0) << made.output;
  ASSERT_TRUE(WaitForPods("envcm", 2, 1));
  Json cm;
  EXPECT_TRUE(WaitFor([&] {
    cm = GetJson("cm " + name + " -n " + ns_);
    return cm.is_object() && cm.value("immutable", false) && cm["data"].value("NCCLJOB_UID", "") == uid;
  }, kTimeout)) << cm.dump();
  EXPECT_EQ(cm["data"].value("MASTER_ADDR", ""), "envcm-0.envcm." + ns_ + ".svc");
  ASSERT_TRUE(cm["metadata"].contains("ownerReferences")) << cm.dump();
  EXPECT_EQ(cm["metadata"]["ownerReferences"][0]["uid"], uid);
}

TEST_F(OperatorTest, ChildrenLeftByADeletedJobOfTheSameNameAreTakenOver) {
  // Left behind with the owner reference of a job that no longer exists: the garbage collector
  // would delete it under the new job, which must own it instead.
  const std::string leftover =
      "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: heir-nccl\n  ownerReferences:\n"
      "  - apiVersion: nccl.dev/v1alpha1\n    kind: NcclJob\n    name: heir\n    uid: 00000000-0000-0000-0000-000000000001\n";
  ASSERT_EQ(Apply(ns_, leftover, "leftover-sa.yaml").exit_code, 0);
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("heir", 2)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("heir", 2, 1));
  const std::string uid = GetJson("nj heir -n " + ns_)["metadata"]["uid"];
  ASSERT_TRUE(WaitFor([&] {
    Json sa = GetJson("sa heir-nccl -n " + ns_);
    return sa.is_object() && sa["metadata"].value("ownerReferences", Json::array()).dump().find(uid) != std::string::npos;
  }, kTimeout)) << GetJson("sa heir-nccl -n " + ns_).dump();
}

TEST_F(OperatorTest, AChildDeletedByHandWhileTheJobRunsIsMadeAgainOwnedByIt) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("keep", 2)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("keep", 2, 1));
  const std::string uid = GetJson("nj keep -n " + ns_)["metadata"]["uid"];
  const std::string env_name = Pods(ns_, "keep").at(0)["spec"]["containers"][0]["envFrom"].back()["configMapRef"]["name"];
  for (const std::string& child : std::vector<std::string>{"svc keep", "role keep-nccl", "rolebinding keep-nccl",
                                                           "sa keep-nccl", "cm " + env_name}) {
    const std::string before = GetJson(child + " -n " + ns_)["metadata"].value("uid", "");
    ASSERT_FALSE(before.empty()) << child;
    auto r = RunKubectl("delete " + child + " -n " + ns_ + " --wait=true --timeout=30s");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // No restart of the operator and nothing else about the job changes: its deletion alone
    // makes the operator look at the job again.
    EXPECT_TRUE(WaitFor([&] {
      Json again = GetJson(child + " -n " + ns_);
      if (!again.is_object()) return false;
      const Json& meta = again["metadata"];
      return meta.value("uid", "") != before && meta["ownerReferences"][0].value("uid", "") == uid &&
             meta["labels"].value("nccl.dev/job-name", "") == "keep";
    }, kTimeout)) << child << " was not made again: " << GetJson(child + " -n " + ns_).dump();
  }
  EXPECT_EQ(Status(ns_, "keep").value("attempt", 0), 1) << "the attempt goes on";
}

// The shared control plane serves native gang scheduling in its version's scheduling.k8s.io API
// (tests/harness/controlplane/lib.sh: v1beta1 on 1.37, v1alpha2 on 1.36, v1alpha1 on 1.35).
std::string ServedGangVersion() {
  Json group = Json::parse(RunKubectl("get --raw /apis/scheduling.k8s.io").output, nullptr, false);
  for (const char* v : {"v1beta1", "v1alpha2", "v1alpha1"}) {
    if (!group.is_object()) break;
    for (const Json& served : group.value("versions", Json::array())) {
      if (served.value("version", "") == v) return v;
    }
  }
  return "";
}

TEST_F(OperatorTest, AGangScheduledJobGetsAWorkloadAndEachAttemptAGangOfItsOwn) {
  const std::string v = ServedGangVersion();
  ASSERT_FALSE(v.empty()) << "the test control plane serves no scheduling.k8s.io gang API";
  const bool podgroups = v != "v1alpha1";
  const std::string workloads = "workloads." + v + ".scheduling.k8s.io";
  const std::string groups = "podgroups." + v + ".scheduling.k8s.io";
  optest::OperatorProcess& op = StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("gang", 3, "  failurePolicy:\n    backoffSeconds: 0\n")).exit_code, 0);
  ASSERT_TRUE(WaitForPods("gang", 3, 1));
  const std::string uid = GetJson("nj gang -n " + ns_)["metadata"]["uid"];
  EXPECT_NE(op.Log().find("scheduling.k8s.io/" + v), std::string::npos) << "the operator names the version it found";

  Json workload = GetJson(workloads + " gang -n " + ns_);
  ASSERT_TRUE(workload.is_object()) << "no " << v << " Workload";
  EXPECT_EQ(workload["metadata"]["ownerReferences"][0].value("uid", ""), uid);
  const Json& group = workload["spec"][podgroups ? "podGroupTemplates" : "podGroups"][0];
  EXPECT_EQ(group.value("name", ""), "trainers");
  EXPECT_EQ(group[podgroups ? "schedulingPolicy" : "policy"]["gang"].value("minCount", 0), 3);

  auto expect_attempt_gang = [&](int attempt) {
    const std::string name = "gang-attempt-" + std::to_string(attempt);
    for (const Json& p : Pods(ns_, "gang")) {
      if (podgroups) {
        EXPECT_EQ(p["spec"]["schedulingGroup"].value("podGroupName", ""), name);
      } else {
        EXPECT_EQ(p["spec"]["workloadRef"].value("podGroupReplicaKey", ""), "attempt-" + std::to_string(attempt));
      }
    }
    if (!podgroups) return;
    Json pg = GetJson(groups + " " + name + " -n " + ns_);
    ASSERT_TRUE(pg.is_object()) << "no PodGroup " << name;
    EXPECT_EQ(pg["metadata"]["ownerReferences"][0].value("uid", ""), uid);
    EXPECT_EQ(pg["metadata"]["labels"].value("nccl.dev/attempt", ""), std::to_string(attempt));
    EXPECT_EQ(pg["spec"]["schedulingPolicy"]["gang"].value("minCount", 0), 3);
  };
  expect_attempt_gang(1);

  // A new attempt: a new gang; the old attempt's PodGroup goes once its pods are gone.
  Terminate(ns_, "gang-1", 1);
  ASSERT_TRUE(WaitForPods("gang", 3, 2)) << RunKubectl("get pods -n " + ns_ + " --show-labels").output;
  expect_attempt_gang(2);
  if (podgroups) {
    EXPECT_TRUE(WaitFor([&] { return !GetJson(groups + " gang-attempt-1 -n " + ns_).is_object(); }, kTimeout))
        << "attempt 1's PodGroup is still there: " << GetJson(groups + " gang-attempt-1 -n " + ns_).dump();
  }

  // The Workload deleted by hand is made again, owned by the job.
  const std::string before = GetJson(workloads + " gang -n " + ns_)["metadata"].value("uid", "");
  ASSERT_EQ(RunKubectl("delete " + workloads + " gang -n " + ns_ + " --wait=true --timeout=30s").exit_code, 0);
  EXPECT_TRUE(WaitFor([&] {
    Json again = GetJson(workloads + " gang -n " + ns_);
    return again.is_object() && again["metadata"].value("uid", "") != before &&
           again["metadata"]["ownerReferences"][0].value("uid", "") == uid;
  }, kTimeout));

  // Gone with the job.
  ASSERT_EQ(RunKubectl("delete nj gang -n " + ns_ + " --wait=true --timeout=30s").exit_code, 0);
  EXPECT_TRUE(WaitFor([&] {
    const bool workload_gone = !GetJson(workloads + " gang -n " + ns_).is_object();
    const bool groups_gone = !podgroups || GetJson(groups + " -n " + ns_).value("items", Json::array()).empty();
    return workload_gone && groups_gone;
  }, kTimeout)) << RunKubectl("get " + workloads + "," + (podgroups ? groups : workloads) + " -n " + ns_).output;
}

TEST_F(OperatorTest, RequiredGangSchedulingWhereNoGangApiIsAllowedFailsTheJobSayingHowToTurnItOn) {
  // An operator whose identity may not use scheduling.k8s.io finds no gang API, as on a cluster
  // that serves none: it says so, fails a Required job with the recipe, and runs an Auto one.
  const std::string rbac =
      "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: nogang}\n---\n"
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: nogang}\nrules:\n"
      "- apiGroups: ['', nccl.dev, rbac.authorization.k8s.io, events.k8s.io]\n  resources: ['*']\n  verbs: ['*']\n---\n"
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: nogang}\n"
      "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: nogang}\n"
      "subjects: [{kind: ServiceAccount, name: nogang, namespace: " + ns_ + "}]\n";
  ASSERT_EQ(Apply(ns_, rbac, "nogang.yaml").exit_code, 0);
  auto token = RunKubectl("create token nogang -n " + ns_ + " --duration=1h");
  ASSERT_EQ(token.exit_code, 0) << token.output;
  while (!token.output.empty() && std::isspace(static_cast<unsigned char>(token.output.back()))) token.output.pop_back();
  auto server = RunKubectl("config view --raw -o jsonpath={.clusters[0].cluster.server}");
  auto ca = RunKubectl("config view --raw -o jsonpath={.clusters[0].cluster.certificate-authority-data}");
  ASSERT_EQ(server.exit_code, 0);
  ASSERT_EQ(ca.exit_code, 0);
  const std::string kubeconfig = WriteTemp(ns_ + "-nogang.kubeconfig",
      "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server.output +
      "\n    certificate-authority-data: " + ca.output + "\nusers:\n- name: u\n  user:\n    token: " + token.output +
      "\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: " + ns_ +
      "\ncurrent-context: c\n");
  optest::OperatorProcess& op = StartOperator({"--kubeconfig=" + kubeconfig});

  ASSERT_EQ(Apply(ns_, JobYaml("must", 2, "  gangScheduling: Required\n")).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "must").value("state", "") == "Failed"; }, kTimeout))
      << Status(ns_, "must").dump() << "\n" << op.Log();
  const Json status = Status(ns_, "must");
  EXPECT_EQ(ConditionReason(status, "Failed"), "InvalidSpec");
  std::string message;
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c.value("type", "") == "Failed") message = c.value("message", "");
  }
  for (const char* recipe : {"gangScheduling is Required", "GenericWorkload", "scheduling.k8s.io/v1beta1=true",
                             "scheduling.k8s.io/v1alpha2=true", "podgroups"}) {
    EXPECT_NE(message.find(recipe), std::string::npos) << recipe << " not in: " << message;
  }
  EXPECT_TRUE(Pods(ns_, "must").empty());
  EXPECT_NE(op.Log().find("no scheduling.k8s.io gang scheduling API is served"), std::string::npos) << op.Log();

  ASSERT_EQ(Apply(ns_, JobYaml("auto", 2), "auto.yaml").exit_code, 0);
  ASSERT_TRUE(WaitForPods("auto", 2, 1)) << op.Log();
  for (const Json& p : Pods(ns_, "auto")) {
    EXPECT_FALSE(p["spec"].contains("schedulingGroup")) << p["spec"].dump();
    EXPECT_FALSE(p["spec"].contains("workloadRef")) << p["spec"].dump();
  }
}

TEST_F(OperatorTest, TrainingJobsAreNotInKubectlsAllButInTheirOwnCategory) {
  // `kubectl delete all --all` must never delete training jobs; `kubectl get nccl` lists them.
  ASSERT_EQ(Apply(ns_, JobYaml("cat", 1)).exit_code, 0);
  auto all = RunKubectl("get all -n " + ns_ + " -o name");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.output.find("nccljob"), std::string::npos) << all.output;
  auto own = RunKubectl("get nccl -n " + ns_ + " -o name");
  ASSERT_EQ(own.exit_code, 0) << own.output;
  EXPECT_NE(own.output.find("nccljob.nccl.dev/cat"), std::string::npos) << own.output;
}

TEST_F(OperatorTest, SuspendDeletesPodsAndResumeStartsANewAttempt) {
  StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("sus", 2)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("sus", 2, 1));
  ASSERT_EQ(RunKubectl("patch nj sus -n " + ns_ + " --type=merge -p '{\"spec\":{\"suspend\":true}}'").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "sus").value("state", "") == "Suspended" && Pods(ns_, "sus").empty(); }, kTimeout));
  ASSERT_EQ(RunKubectl("patch nj sus -n " + ns_ + " --type=merge -p '{\"spec\":{\"suspend\":false}}'").exit_code, 0);
  ASSERT_TRUE(WaitForPods("sus", 2, 2));
  EXPECT_EQ(Status(ns_, "sus")["restarts"], 0);
}

TEST_F(OperatorTest, SigkillMidCreationAndRestartMakesNoDuplicates) {
  constexpr int kReplicas = 40;
  auto& first = StartOperator();
  ASSERT_EQ(Apply(ns_, JobYaml("crash", kReplicas)).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return !Pods(ns_, "crash").empty(); }, kTimeout));
  first.Kill(SIGKILL);
  int seen = static_cast<int>(Pods(ns_, "crash").size());
  StartOperator();
  ASSERT_TRUE(WaitForPods("crash", kReplicas, 1)) << "pods seen when killed: " << seen;
  std::set<std::string> names;
  for (const Json& p : Pods(ns_, "crash")) names.insert(p["metadata"]["name"]);
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kReplicas));
  Json status = Status(ns_, "crash");
  EXPECT_EQ(status["attempt"], 1);
  EXPECT_EQ(status["restarts"], 0);
  std::cerr << "operator killed with " << seen << " of " << kReplicas << " pods created\n";
}

// Issue 11: the operator dies by SIGKILL right after it wrote the id into the ConfigMap, before
// the status and the event (NCCLOP_TEST_KILL_AFTER_ID_WRITE, a test-only switch, puts the
// SIGKILL exactly there, whichever path publishes), and every trainer finishes before the next
// operator runs. Status is derived from what the API server holds: the ConfigMap has the id
// of the attempt, so IdPublished is True with the ConfigMap's publishedAt.
TEST_F(OperatorTest, AnIdPublishedRightBeforeASigkillIsInTheStatusAfterTheJobFinished) {
  auto& first = StartOperator({}, {"NCCLOP_TEST_KILL_AFTER_ID_WRITE=1"});
  ASSERT_EQ(Apply(ns_, JobYaml("window", 2)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("window", 2, 1));
  ASSERT_TRUE(WaitFor([&] { return ConditionReason(Status(ns_, "window"), "Created") == "AttemptStarted"; }, kTimeout));
  ASSERT_EQ(RunKubectl("annotate pod window-0 -n " + ns_ + " nccl.dev/unique-id=V0lO nccl.dev/unique-id-attempt=1").exit_code, 0);
  ASSERT_EQ(first.WaitForExit(kTimeout), 128 + SIGKILL) << "the operator did not stop right after publishing";
  Json cm = GetJson("cm window-nccl -n " + ns_);
  ASSERT_EQ(cm["data"].value("uniqueId", ""), "V0lO") << cm.dump();
  const std::string published_at = cm["data"].value("publishedAt", "");
  ASSERT_FALSE(published_at.empty());
  ASSERT_FALSE(Status(ns_, "window").contains("idPublishedTime"))
      << "the window was missed: the status was written: " << Status(ns_, "window").dump() << " " << cm.dump();

  Terminate(ns_, "window-0", 0);
  Terminate(ns_, "window-1", 0);
  StartOperator();
  ASSERT_TRUE(WaitFor([&] { return Status(ns_, "window").value("state", "") == "Succeeded"; }, kTimeout));
  Json status = Status(ns_, "window");
  EXPECT_EQ(ConditionReason(status, "IdPublished"), "Published") << status.dump();
  EXPECT_EQ(status.value("idPublishedTime", ""), published_at) << status.dump();
  Json events = GetJson("events -n " + ns_ + " --field-selector involvedObject.name=window,reason=IdPublished");
  EXPECT_EQ(events.is_object() ? events["items"].size() : 0u, 1u) << "the next operator records the event once";
}

TEST_F(OperatorTest, WithLeaderElectionOnlyOneOperatorActs) {
  const std::vector<std::string> le = {"--leader-elect", "--leader-election-namespace=" + ns_,
                                       "--leader-election-id=optest"};
  auto& a = StartOperator(le);
  auto& b = StartOperator(le);
  // Until an operator makes the Lease, kubectl finds none (null): polled again, not read.
  ASSERT_TRUE(WaitFor([&] {
    const Json lease = GetJson("lease optest -n " + ns_);
    return lease.is_object() && lease.value("spec", Json::object()).value("holderIdentity", "") != "";
  }, kTimeout));
  ASSERT_EQ(Apply(ns_, JobYaml("le", 2)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("le", 2, 1));
  const bool a_leads = a.Log().find("became leader") != std::string::npos;
  const bool b_leads = b.Log().find("became leader") != std::string::npos;
  EXPECT_NE(a_leads, b_leads) << "exactly one operator must lead";
  auto& follower = a_leads ? b : a;
  auto& leader = a_leads ? a : b;
  EXPECT_EQ(follower.Log().find("creating 2 pods"), std::string::npos) << "the follower acted";
  EXPECT_NE(leader.Log().find("creating 2 pods"), std::string::npos);

  // A clean shutdown releases the lease; the follower takes over and acts.
  EXPECT_EQ(leader.Kill(SIGTERM), 0);
  ASSERT_TRUE(WaitFor([&] { return follower.Log().find("became leader") != std::string::npos; }, kTimeout));
  ASSERT_EQ(Apply(ns_, JobYaml("le2", 1), "job2.yaml").exit_code, 0);
  ASSERT_TRUE(WaitForPods("le2", 1, 1));
}

struct InvalidCase {
  const char* name;
  const char* spec;  // YAML under spec:, indented two spaces
  const char* message;
};

TEST_F(OperatorTest, InvalidJobsAreRejectedByKubectlApplyWithUnderstandableMessages) {
  const std::string kTemplate = "  template:\n    spec:\n      containers:\n      - name: trainer\n        image: t:1\n";
  const std::vector<InvalidCase> cases = {
      {"zero-replicas", "  replicas: 0\n", "should be greater than or equal to 1"},
      {"negative-gpus", "  gpusPerPod: -1\n", "should be greater than or equal to 0"},
      {"negative-restarts", "  failurePolicy:\n    maxRestarts: -1\n", "should be greater than or equal to 0"},
      {"no-template", "  replicas: 2\n", "spec.template: Required value"},
      {"no-containers", "  template:\n    spec:\n      containers: []\n", "should have at least 1 items"},
      {"reserved-name", "  template:\n    spec:\n      containers:\n      - name: nccl-sidecar\n        image: t:1\n",
       "reserved for the injected sidecar"},
      {"restart-always", "  template:\n    spec:\n      restartPolicy: Always\n      containers:\n      - name: t\n        image: t:1\n",
       "supported values: \"Never\""},
      {"bad-ifname", "  network:\n    socketIfname: \"eth0; rm\"\n", "spec.network.socketIfname"},
      {"bad-exit-code", "  failurePolicy:\n    failFastExitCodes: [256]\n", "should be less than or equal to 255"},
      {"backoff-over-max", "  failurePolicy:\n    backoffSeconds: 100\n    maxBackoffSeconds: 10\n",
       "must not exceed failurePolicy.maxBackoffSeconds"},
      {"unknown-trainer",
       "  template:\n    metadata:\n      annotations:\n        nccl.dev/trainer-container: nope\n    spec:\n      containers:\n      - name: t\n        image: t:1\n",
       "must name one of template.spec.containers"},
      {"replicas-string", "  replicas: \"four\"\n", "spec.replicas"},
      {"no-image", "  template:\n    spec:\n      containers:\n      - name: t\n", "image: Required value"},
      {"a-very-long-name-that-cannot-fit-into-a-pod-hostname-x", "", "at most 52 characters"},
      {"reserved-init-name",
       "  template:\n    spec:\n      initContainers:\n      - name: nccl-sidecar\n        image: t:1\n"
       "      containers:\n      - name: t\n        image: t:1\n",
       "init container name nccl-sidecar is reserved"},
      {"init-shares-a-name",
       "  template:\n    spec:\n      initContainers:\n      - name: t\n        image: t:1\n"
       "      containers:\n      - name: t\n        image: t:1\n",
       "may not share its name with a container"},
  };
  for (const InvalidCase& c : cases) {
    std::string spec = c.spec;
    if (spec.find("template:") == std::string::npos && std::string(c.name) != "no-template") spec += kTemplate;
    if (std::string(c.name).size() > 52) spec += "";
    std::string yaml = std::string("apiVersion: nccl.dev/v1alpha1\nkind: NcclJob\nmetadata:\n  name: ") + c.name +
                       "\nspec:\n" + spec;
    auto r = Apply(ns_, yaml, std::string(c.name) + ".yaml");
    EXPECT_NE(r.exit_code, 0) << c.name << " was accepted";
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.name << ": " << r.output;
  }
}

TEST_F(OperatorTest, ServesMetricsAndHealth) {
  auto& op = StartOperator({"--log-format=json"});
  std::string metrics_port = ServingPort(op, "serving metrics"), health_port = ServingPort(op, "serving health probes");
  ASSERT_FALSE(metrics_port.empty() || health_port.empty()) << op.Log();
  ASSERT_EQ(Apply(ns_, JobYaml("m", 1)).exit_code, 0);
  ASSERT_TRUE(WaitForPods("m", 1, 1));
  ASSERT_TRUE(WaitFor([&] {
    auto r = testsupport::Run("curl -sf http://127.0.0.1:" + metrics_port + "/metrics");
    return r.output.find("ncclop_jobs{state=\"Pending\"} 1") != std::string::npos &&
           r.output.find("ncclop_reconcile_duration_seconds_bucket") != std::string::npos;
  }, kTimeout));
  EXPECT_EQ(testsupport::Run("curl -sf http://127.0.0.1:" + health_port + "/healthz").output, "ok\n");
  ASSERT_TRUE(WaitFor([&] { return testsupport::Run("curl -sf http://127.0.0.1:" + health_port + "/readyz").exit_code == 0; }, kTimeout));
  EXPECT_EQ(op.Kill(SIGTERM), 0) << "SIGTERM is a clean shutdown";
}

}  // namespace
