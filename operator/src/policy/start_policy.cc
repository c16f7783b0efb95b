#include "policy/start_policy.h"

#include <map>

namespace ncclop::policy {

std::optional<BlockedStart> FindBlockedStart(const std::vector<ObservedPod>& pods, int attempt, int replicas) {
  std::map<int, const ObservedPod*> blocked;
  for (const ObservedPod& p : pods) {
    if (p.attempt == attempt && p.index >= 0 && p.index < replicas && !p.start_blocked_reason.empty()) blocked[p.index] = &p;
  }
  if (blocked.empty()) return std::nullopt;
  const ObservedPod& p = *blocked.begin()->second;
  return BlockedStart{p.name, p.start_blocked_reason, "pod " + p.name + " cannot start: " + p.start_blocked_detail};
}

std::optional<api::Time> BlockedStartDeadline(const api::NcclJob& job) {
  auto started = api::ParseTime(job.status.attempt_start_time);
  if (!started) return std::nullopt;
  return *started + std::chrono::seconds(job.spec.init_timeout_seconds);
}

}  // namespace ncclop::policy
