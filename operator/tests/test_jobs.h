// Hand-made NcclJobs and pods for the unit tests.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/nccl_job.h"
#include "api/time.h"
#include "observed/attempt.h"
#include "observed/pod.h"

namespace ncclop::testing {

// "Now" in the tests that take a time: every fixture's times are set against it.
inline const api::Time kNow = *api::ParseTime("2024-01-01T00:00:00Z");

inline nlohmann::json JobJson(int replicas = 4, int gpus = 2) {
  return nlohmann::json::parse(R"({
    "apiVersion": "nccl.dev/v1alpha1", "kind": "NcclJob",
    "metadata": {"name": "demo", "namespace": "ml", "uid": "uid-1", "generation": 1},
    "spec": {"template": {"metadata": {"labels": {"team": "a"}},
                          "spec": {"containers": [{"name": "trainer", "image": "t:1",
                                                   "env": [{"name": "RANK", "value": "99"}, {"name": "KEEP", "value": "1"}]},
                                                  {"name": "logger", "image": "l:1"}]}}}
  })")
      .patch(nlohmann::json::array({{{"op", "add"}, {"path", "/spec/replicas"}, {"value", replicas}},
                                    {{"op", "add"}, {"path", "/spec/gpusPerPod"}, {"value", gpus}}}));
}

inline api::NcclJob Job(int replicas = 4, int gpus = 2) { return *api::ParseNcclJob(JobJson(replicas, gpus)); }

inline observed::ObservedPod Pod(int index, int attempt, const char* phase = "Running") {
  observed::ObservedPod p;
  p.name = "demo-" + std::to_string(index);
  p.index = index;
  p.attempt = attempt;
  p.phase = phase;
  if (std::string(phase) == "Succeeded") p.trainer_succeeded = true;
  return p;
}

inline observed::ObservedPod FailedPod(int index, int attempt, int exit_code) {
  observed::ObservedPod p = Pod(index, attempt, "Failed");
  p.failed = true;
  p.trainer_exit_code = exit_code;
  p.failure_detail = "trainer exited with code " + std::to_string(exit_code);
  return p;
}

// Pods 0..3 of `attempt` (a job of 4 replicas), all in `phase`.
inline std::vector<observed::ObservedPod> AllPods(int attempt, const char* phase = "Running") {
  std::vector<observed::ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(i, attempt, phase));
  return pods;
}

// A pod evicted through the Eviction API (e.g. by a node drain): its trainer got SIGTERM.
inline observed::ObservedPod EvictedPod(int index, int attempt) {
  observed::ObservedPod p = FailedPod(index, attempt, 143);
  p.terminating = true;
  p.disruption = observed::Disruption{"Eviction", "evicted through the Eviction API, e.g. by a node drain (EvictionByEvictionAPI)"};
  return p;
}

}  // namespace ncclop::testing
