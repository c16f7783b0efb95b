// What the Decide tests start from: a job running an attempt, its ConfigMap, and a look at a
// Plan's events.
#pragma once

#include <algorithm>
#include <string>

#include "observed/configmap.h"
#include "policy/decide.h"
#include "test_jobs.h"

namespace ncclop::testing {

// A job of 4 pods of 2 GPUs at `attempt`, started 60 s before kNow, the attempt 30 s before.
inline api::NcclJob RunningJob(int attempt = 1, int restarts = 0) {
  auto job = Job(4, 2);
  job.status.attempt = attempt;
  job.status.restarts = restarts;
  job.status.start_time = "2023-12-31T23:59:00Z";
  job.status.attempt_start_time = "2023-12-31T23:59:30Z";
  return job;
}

// The job's ConfigMap at `attempt`; with the id, published at kNow.
inline observed::ObservedConfigMap Cm(int attempt, bool has_id = false) {
  return {true, attempt, has_id, has_id ? "2024-01-01T00:00:00Z" : "", "uid-1"};
}

inline bool HasEvent(const policy::Plan& p, const std::string& reason) {
  return std::any_of(p.events.begin(), p.events.end(), [&](const policy::Event& e) { return e.reason == reason; });
}

}  // namespace ncclop::testing
