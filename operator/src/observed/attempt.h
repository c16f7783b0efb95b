// One attempt's pods as every policy sees them, sorted once (as JobSet sorts a job's children
// once per reconcile): the pods of the attempt by index, the stale ones, the root. The
// failure, success, start and publish rules and the status counts all read this view instead
// of each walking the pod list again. Pure; the view points into the pods it was built from.
#pragma once

#include <map>
#include <vector>

#include "observed/pod.h"

namespace ncclop::observed {

struct AttemptView {
  int attempt = 0;
  int replicas = 0;
  // Every pod labelled with this attempt, whatever its index (the status counts them).
  std::vector<const ObservedPod*> members;
  // Members with an index in [0, replicas), by index.
  std::map<int, const ObservedPod*> by_index;
  // Pods that are not of this attempt, or of it with an index out of range, or moved to it but
  // ended before they restarted into it (ObservedPod::ended_before_its_attempt): they go before
  // any pod of the attempt is made, since pod names are reused.
  std::vector<const ObservedPod*> stale;

  // Pod 0 of the attempt, the one whose trainer makes the id; nullptr when not seen.
  const ObservedPod* root() const {
    auto it = by_index.find(0);
    return it == by_index.end() ? nullptr : it->second;
  }
  // Every pod of the attempt is in the cache: from then on a missing one has disappeared.
  bool complete() const { return static_cast<int>(by_index.size()) == replicas; }
};

AttemptView ViewAttempt(const std::vector<ObservedPod>& pods, int attempt, int replicas);

}  // namespace ncclop::observed
