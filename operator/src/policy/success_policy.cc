#include "policy/success_policy.h"

#include <set>

namespace ncclop::policy {

bool AttemptSucceeded(const std::vector<ObservedPod>& pods, int attempt, int replicas) {
  std::set<int> done;
  for (const ObservedPod& p : pods) {
    if (p.attempt == attempt && p.trainer_succeeded && !p.failed && p.index >= 0 && p.index < replicas) done.insert(p.index);
  }
  return static_cast<int>(done.size()) == replicas;
}

}  // namespace ncclop::policy
