#include "policy/admission.h"

namespace ncclop::policy {

bool ReleasesEvictedQuota(const observed::ObservedKueueWorkload& workload, bool job_finished, bool pods_left) {
  // A finished job's Workload is marked Finished instead, which releases the quota too.
  return workload.exists && workload.evicted && workload.quota_reserved && !workload.finished && !job_finished &&
         !pods_left;
}

std::optional<bool> KueueWorkloadActiveFor(const observed::ObservedKueueWorkload& workload, bool suspend,
                                           bool job_finished) {
  if (!workload.exists || workload.finished || job_finished) return std::nullopt;
  if (suspend && workload.active) return false;
  if (!suspend && !workload.active && workload.deactivated_for_suspend) return true;
  return std::nullopt;
}

std::optional<KueuePodsReady> PodsReadyFor(const observed::ObservedKueueWorkload& workload, bool job_finished,
                                           int ready_pods, int replicas) {
  if (!workload.exists || workload.finished || job_finished) return std::nullopt;
  const std::string& status = workload.pods_ready_status;
  const std::string& reason = workload.pods_ready_reason;
  const KueuePodsReady not_started{false, "WaitForStart", "Not all pods are ready or succeeded"};
  KueuePodsReady want;
  if (!workload.admitted) {
    if (status.empty()) return std::nullopt;
    want = not_started;
  } else if (ready_pods >= replicas) {
    const bool recovering = reason == "WaitForRecovery" || reason == "Recovered";
    want = {true, recovering ? "Recovered" : "Started", "All pods reached readiness and the workload is running"};
  } else if (status == "True" || reason == "WaitForRecovery") {
    want = {false, "WaitForRecovery", "At least one pod has failed, waiting for recovery"};
  } else {
    want = not_started;
  }
  if (status == (want.ready ? "True" : "False") && reason == want.reason) return std::nullopt;
  return want;
}

}  // namespace ncclop::policy
