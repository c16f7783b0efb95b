#include "observed/attempt.h"

namespace ncclop::observed {

AttemptView ViewAttempt(const std::vector<ObservedPod>& pods, int attempt, int replicas) {
  AttemptView view;
  view.attempt = attempt;
  view.replicas = replicas;
  for (const ObservedPod& p : pods) {
    // A pod moved here that ended before its restart into this attempt never joins it.
    const bool of_attempt = p.attempt == attempt && !p.ended_before_its_attempt;
    if (of_attempt) view.members.push_back(&p);
    if (of_attempt && p.index >= 0 && p.index < replicas) {
      view.by_index[p.index] = &p;
    } else {
      view.stale.push_back(&p);
    }
  }
  return view;
}

}  // namespace ncclop::observed
