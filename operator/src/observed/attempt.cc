#include "observed/attempt.h"

namespace ncclop::observed {

AttemptView ViewAttempt(const std::vector<ObservedPod>& pods, int attempt, int replicas) {
  AttemptView view;
  view.attempt = attempt;
  view.replicas = replicas;
  for (const ObservedPod& p : pods) {
    if (p.attempt == attempt) view.members.push_back(&p);
    if (p.attempt == attempt && p.index >= 0 && p.index < replicas) {
      view.by_index[p.index] = &p;
    } else {
      view.stale.push_back(&p);
    }
  }
  return view;
}

}  // namespace ncclop::observed
