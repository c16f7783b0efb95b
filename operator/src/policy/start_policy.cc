#include "policy/start_policy.h"

namespace ncclop::policy {

std::optional<BlockedStart> FindBlockedStart(const observed::AttemptView& attempt) {
  for (const auto& [index, p] : attempt.by_index) {
    if (p->start_blocked_reason.empty()) continue;
    return BlockedStart{p->name, p->start_blocked_reason, "pod " + p->name + " cannot start: " + p->start_blocked_detail};
  }
  return std::nullopt;
}

std::optional<api::Time> BlockedStartDeadline(const api::NcclJob& job) {
  auto started = api::ParseTime(job.status.attempt_start_time);
  if (!started) return std::nullopt;
  return *started + std::chrono::seconds(job.spec.init_timeout_seconds);
}

}  // namespace ncclop::policy
