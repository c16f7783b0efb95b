#include "policy/admission.h"

namespace ncclop::policy {

bool ReleasesEvictedQuota(const observed::ObservedWorkload& workload, bool job_finished, bool pods_left) {
  // A finished job's Workload is marked Finished instead, which releases the quota too.
  return workload.exists && workload.evicted && workload.quota_reserved && !workload.finished && !job_finished &&
         !pods_left;
}

std::optional<bool> WorkloadActiveFor(const observed::ObservedWorkload& workload, bool suspend, bool job_finished) {
  if (!workload.exists || workload.finished || job_finished) return std::nullopt;
  if (suspend && workload.active) return false;
  if (!suspend && !workload.active && workload.deactivated_for_suspend) return true;
  return std::nullopt;
}

}  // namespace ncclop::policy
