// What an operator integration test needs around the real control plane: kubectl as JSON, a
// namespace of its own per test, the NcclJob CRD installed, and operators run as child processes
// (operator_process.h) watching that namespace, their logs printed when a test fails.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "operator_process.h"
#include "testsupport/controlplane.h"

namespace optest {

using Json = nlohmann::json;

inline std::string Shell(const std::string& s) { return "'" + s + "'"; }  // our inputs hold no quotes

// `kubectl get <args> -o json`; null when it fails (not found).
inline Json GetJson(const std::string& args) {
  auto r = testsupport::RunKubectl("get " + args + " -o json");
  if (r.exit_code != 0) return Json();
  return Json::parse(r.output, nullptr, false);
}

inline std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = testsupport::ControlPlaneDir() + "/optest-" + name;
  std::ofstream(path) << text;
  return path;
}

inline testsupport::CommandResult Apply(const std::string& ns, const std::string& yaml, const std::string& name) {
  return testsupport::RunKubectl("apply -n " + ns + " -f " + WriteTemp(ns + "-" + name, yaml));
}

// `kubectl apply --server-side` of a CRD, then its Established condition within a minute (kubectl
// wait errs at once while a just-made CRD has no status conditions yet: asked again until it answers).
inline testsupport::CommandResult InstallCrd(const std::string& file, const std::string& name) {
  auto r = testsupport::RunKubectl("apply --server-side --force-conflicts -f " + file);
  if (r.exit_code != 0) return r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  do {
    r = testsupport::RunKubectl("wait --for=condition=Established crd/" + name + " --timeout=60s");
    if (r.exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } while (std::chrono::steady_clock::now() < deadline);
  return r;
}

// Pods of `job` in `ns` that are not being deleted.
inline std::vector<Json> Pods(const std::string& ns, const std::string& job) {
  Json list = GetJson("pods -n " + ns + " -l nccl.dev/job-name=" + job);
  std::vector<Json> out;
  if (list.is_object()) {
    for (Json& p : list["items"]) {
      if (!p["metadata"].contains("deletionTimestamp")) out.push_back(p);
    }
  }
  return out;
}

inline Json Status(const std::string& ns, const std::string& job) {
  Json j = GetJson("nj " + job + " -n " + ns);
  return j.is_object() ? j.value("status", Json::object()) : Json();
}

// The condition of `type` when it is True; null otherwise.
inline Json TrueCondition(const Json& status, const std::string& type) {
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c.value("type", "") == type && c.value("status", "") == "True") return c;
  }
  return Json();
}

// Plays the kubelet: the trainer container of pod `name` terminated with `exit_code`.
inline void Terminate(const std::string& ns, const std::string& name, int exit_code) {
  Json patch = {{"status",
                 {{"phase", exit_code == 0 ? "Succeeded" : "Failed"},
                  {"containerStatuses",
                   Json::array({{{"name", "trainer"}, {"image", "trainer:1"}, {"imageID", ""}, {"ready", false},
                                 {"restartCount", 0},
                                 {"state", {{"terminated", {{"exitCode", exit_code}, {"reason", exit_code ? "Error" : "Completed"}}}}}}})}}}};
  auto r = testsupport::RunKubectl("patch pod " + name + " -n " + ns + " --subresource=status --type=merge -p " +
                                   Shell(patch.dump()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

class OperatorFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = InstallCrd(NCCLOP_CRD_FILE, "nccljobs.nccl.dev");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string n = std::string(info->name());
    for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
    // A fresh name per run: a namespace of an earlier run may still be terminating.
    ns_ = ("op-" + n).substr(0, 44) + "-" + std::to_string(getpid() % 100000);
    auto r = testsupport::RunKubectl("create namespace " + ns_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  void TearDown() override {
    if (HasFailure()) {
      for (auto& op : operators_) std::cerr << "---- operator log ----\n" << op->Log() << "\n";
    }
    operators_.clear();
    testsupport::RunKubectl("delete namespace " + ns_ + " --wait=false");
  }

  OperatorProcess& StartOperator(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {NCCLOP_OPERATOR_BIN, "--kubeconfig=" + testsupport::Kubeconfig(),
                                     "--namespace=" + ns_, "--metrics-bind-address=127.0.0.1:0",
                                     "--health-probe-bind-address=127.0.0.1:0", "--log-level=debug"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string log = testsupport::ControlPlaneDir() + "/optest-" + ns_ + "-operator-" +
                      std::to_string(operators_.size()) + ".log";
    std::remove(log.c_str());
    operators_.push_back(std::make_unique<OperatorProcess>(args, log));
    return *operators_.back();
  }

  // Every pod of `job` exists, n of them, all of `attempt`.
  bool WaitForPods(const std::string& job, int n, int attempt) {
    return testsupport::WaitFor([&] {
      auto pods = Pods(ns_, job);
      if (static_cast<int>(pods.size()) != n) return false;
      for (const Json& p : pods) {
        if (p["metadata"]["labels"].value("nccl.dev/attempt", "") != std::to_string(attempt)) return false;
      }
      return true;
    }, kTimeout);
  }

  static constexpr std::chrono::seconds kTimeout{30};
  std::string ns_;
  std::vector<std::unique_ptr<OperatorProcess>> operators_;
};

}  // namespace optest
