// Kueue Workloads as Kueue writes them, and a job labelled with a queue: what the tests of
// admission start from (observed/workload, desired/workload, policy/admission, policy/decide_queued).
#pragma once

#include <nlohmann/json.hpp>

#include "api/nccl_job.h"
#include "observed/kueue_workload.h"
#include "test_jobs.h"

namespace ncclop::testing {

inline api::NcclJob QueuedJob() {
  auto job = Job(4, 2);
  job.queue_name = "team-a";
  return job;
}

inline observed::ObservedKueueWorkload Admitted() {
  return observed::ObserveKueueWorkload(nlohmann::json::parse(R"({"metadata":{"name":"nccljob-demo"},"status":{
      "admission":{"clusterQueue":"gpus","podSetAssignments":[{"name":"trainers","count":4}]},
      "conditions":[{"type":"QuotaReserved","status":"True"},{"type":"Admitted","status":"True"}]}})"));
}

inline observed::ObservedKueueWorkload Pending() {
  return observed::ObserveKueueWorkload(nlohmann::json::parse(R"({"metadata":{"name":"nccljob-demo"},"status":{"conditions":[
      {"type":"QuotaReserved","status":"False","reason":"Pending",
       "message":"couldn't assign flavors to pod set trainers: insufficient unused quota for cpu in flavor default"}]}})"));
}

// Admitted, then evicted because it was deactivated; its quota is still reserved.
inline constexpr const char* kEvictedWorkload = R"({"metadata":{"name":"nccljob-demo","generation":2,"resourceVersion":"41"},"status":{
    "admission":{"clusterQueue":"gpus","podSetAssignments":[{"name":"trainers","count":4}]},
    "accumulatedPastExecutionTimeSeconds":7,
    "conditions":[
      {"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue gpus","lastTransitionTime":"2023-12-31T23:59:00Z"},
      {"type":"Admitted","status":"True","reason":"Admitted","message":"The workload is admitted","lastTransitionTime":"2023-12-31T23:59:00Z"},
      {"type":"Evicted","status":"True","reason":"Deactivated","message":"The workload is deactivated","lastTransitionTime":"2023-12-31T23:59:50Z"}]}})";

inline observed::ObservedKueueWorkload WithPodsReady(observed::ObservedKueueWorkload wl, const char* status, const char* reason) {
  wl.pods_ready_status = status;
  wl.pods_ready_reason = reason;
  return wl;
}

}  // namespace ncclop::testing
