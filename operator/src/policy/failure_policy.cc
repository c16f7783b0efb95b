#include "policy/failure_policy.h"

#include <algorithm>

#include "contract/names.h"

namespace ncclop::policy {

std::optional<AttemptFailure> FindAttemptFailure(const std::string& job_name, const observed::AttemptView& attempt,
                                                 bool id_published,
                                                 const std::map<int, observed::Disruption>& gone_disrupted) {
  const auto& by_index = attempt.by_index;
  const int replicas = attempt.replicas;
  for (const auto& [index, pod] : by_index) {
    if (pod->disruption && (pod->failed || pod->terminating)) {
      return AttemptFailure{pod->name, "pod " + pod->name + " was " + pod->disruption->account, pod->trainer_exit_code,
                            pod->disruption};
    }
  }
  for (const auto& [index, disruption] : gone_disrupted) {
    if (index < 0 || index >= replicas || by_index.contains(index)) continue;
    std::string name = contract::PodName(job_name, index);
    return AttemptFailure{name, "pod " + name + " was " + disruption.account, std::nullopt, disruption};
  }
  for (const auto& [index, pod] : by_index) {
    if (pod->failed && !pod->stalled) {
      return AttemptFailure{pod->name, "pod " + pod->name + ": " + pod->failure_detail, pod->trainer_exit_code, std::nullopt};
    }
  }
  // Stalled only: every stalled pod is named (a hung rank stops its peers too; their last steps
  // tell which went silent first).
  std::optional<AttemptFailure> stalled;
  for (const auto& [index, pod] : by_index) {
    if (!pod->stalled) continue;
    if (!stalled) {
      stalled = AttemptFailure{pod->name, "", std::nullopt, std::nullopt, /*stalled=*/true};
    } else {
      stalled->detail += "; ";
    }
    stalled->detail += "pod " + pod->name + ": " + pod->failure_detail;
  }
  if (stalled) return stalled;
  if (!id_published) return std::nullopt;
  for (int i = 0; i < replicas; ++i) {
    auto it = by_index.find(i);
    if (it == by_index.end()) {
      std::string name = contract::PodName(job_name, i);
      return AttemptFailure{name, "pod " + name + " disappeared while its attempt ran", std::nullopt, std::nullopt};
    }
    if (it->second->terminating && !it->second->trainer_succeeded) {
      return AttemptFailure{it->second->name, "pod " + it->second->name + " was deleted while its attempt ran", std::nullopt,
                            std::nullopt};
    }
  }
  return std::nullopt;
}

FailureVerdict Judge(const api::FailurePolicy& policy, const AttemptFailure& failure, int restarts_so_far,
                     int disruptions_so_far) {
  if (failure.disruption) {
    const bool capped = policy.max_disruptions && disruptions_so_far >= *policy.max_disruptions;
    return capped ? FailureVerdict::kDisruptionsExhausted : FailureVerdict::kRestartAfterDisruption;
  }
  if (failure.exit_code) {
    const auto& codes = policy.fail_fast_exit_codes;
    if (std::find(codes.begin(), codes.end(), *failure.exit_code) != codes.end()) return FailureVerdict::kFailFast;
  }
  if (restarts_so_far >= policy.max_restarts) return FailureVerdict::kRestartsExhausted;
  return FailureVerdict::kRestart;
}

std::chrono::seconds RestartBackoff(const api::FailurePolicy& policy, int restart) {
  std::int64_t delay = policy.backoff_seconds;
  for (int i = 1; i < restart && delay < policy.max_backoff_seconds; ++i) delay *= 2;
  return std::chrono::seconds(std::min<std::int64_t>(delay, policy.max_backoff_seconds));
}

}  // namespace ncclop::policy
