// What the publish tests (fast_publish, publish_rule, root_ids) start from: a job at an attempt,
// its root pod with or without an id, its ConfigMap, and the fast path's decision over them.
#pragma once

#include <string>
#include <vector>

#include "observed/attempt.h"
#include "observed/configmap.h"
#include "policy/fast_publish.h"
#include "test_jobs.h"

namespace ncclop::testing {

inline api::NcclJob JobAt(int attempt) {
  api::NcclJob job = Job(4, 2);
  job.status.attempt = attempt;
  job.status.state = api::state::kPending;
  job.status.attempt_start_time = "2023-12-31T23:59:30Z";
  return job;
}

inline observed::ObservedPod Root(int attempt, int id_attempt, const std::string& id = "QUJD") {
  observed::ObservedPod p = Pod(0, attempt, "Running");
  p.unique_id = id;
  p.unique_id_attempt = id_attempt;
  return p;
}

// The root and pods 1..present-1 of `attempt`: what the cache holds of the job's pods.
inline std::vector<observed::ObservedPod> Pods(const observed::ObservedPod& root, int attempt, int present = 4) {
  std::vector<observed::ObservedPod> pods = {root};
  for (int i = 1; i < present; ++i) pods.push_back(Pod(i, attempt));
  return pods;
}

// The ConfigMap of job `uid` at `attempt` (no publishedAt).
inline observed::ObservedConfigMap ConfigMapAt(int attempt, bool has_id = false, const std::string& uid = "uid-1") {
  observed::ObservedConfigMap cm;
  cm.exists = true;
  cm.attempt = attempt;
  cm.has_id = has_id;
  cm.job_uid = uid;
  return cm;
}

inline policy::PublishDecision Fast(const api::NcclJob& job, const std::vector<observed::ObservedPod>& pods,
                                    const observed::ObservedConfigMap& cm) {
  return policy::DecideFastPublish(job, observed::ViewAttempt(pods, job.status.attempt, job.spec.replicas), cm, kNow);
}

// 4 pods of 1 GPU, 2 bootstrap roots: pods 0 and 2 make the ids.
inline api::NcclJob TwoRootJobAt(int attempt) {
  api::NcclJob job = JobAt(attempt);
  job.spec.gpus_per_pod = 1;
  job.spec.bootstrap_roots = 2;
  job.spec.bootstrap_roots_set = true;
  return job;
}

inline std::vector<observed::ObservedPod> PodsWithIds(int attempt, int id2_attempt, int pod2_attempt) {
  std::vector<observed::ObservedPod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(Pod(i, i == 2 ? pod2_attempt : attempt));
  pods[0].unique_id = "QUFB";
  pods[0].unique_id_attempt = attempt;
  pods[2].unique_id = "QkJC";
  pods[2].unique_id_attempt = id2_attempt;
  return pods;
}

}  // namespace ncclop::testing
