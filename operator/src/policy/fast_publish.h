// The id publish fast path: when the root pod reports its id, the ConfigMap is written
// straight away instead of after the full reconcile of the job (which, for a job that is
// creating a thousand pods, holds the job's queue key for seconds). Pure: the controller
// hands in what its caches hold; the full reconcile stays the level-triggered backstop and
// writes the same ConfigMap content, so either path may win.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/nccl_job.h"
#include "desired/configmap.h"
#include "policy/observed.h"

namespace ncclop::policy {

struct RootPod {
  ObservedPod pod;
  bool owned_by_job = false;  // an ownerReference carries the job's UID
};

struct FastPublish {
  std::optional<desired::PublishedId> publish;  // set: write this id for job.status.attempt
  std::string skipped_because;                  // when not set, why (for debug logs; never the id)
  // Not yet, but soon: only some pods of the attempt are in the cache (still being created).
  bool retry_soon = false;
};

// Distinct indices 0..replicas-1 among `pods` that carry `attempt`: the pods of the attempt
// the cache holds. An id is published only when this is `replicas`, because from then on a
// missing pod counts as one that disappeared (failure_policy.h) and fails the attempt.
int PodsOfAttempt(const std::vector<ObservedPod>& pods, int attempt, int replicas);

// Publishes only when everything agrees on one attempt: the job's status.attempt, the root
// pod's attempt label, its id annotation's attempt and the ConfigMap's attempt (the full
// reconcile resets the ConfigMap to an attempt before any pod of it exists), and the
// ConfigMap belongs to this job UID and holds no id yet; and every pod of the attempt is in
// the cache (`pods_of_attempt`, from PodsOfAttempt). With several bootstrap roots the job's own
// `pods` must also hold an id of the attempt on every root pod (root_ids.h): then the list is
// published.
FastPublish DecideFastPublish(const api::NcclJob& job, const std::optional<RootPod>& root, int pods_of_attempt,
                              const ObservedConfigMap& configmap, api::Time now,
                              const std::vector<ObservedPod>& pods = {});

// True when `now` is a pod of a job (an index label) whose id annotation (or its attempt) is new
// compared with `before` (nullptr for an added pod): the moment to try the fast path. Only root
// pods (pod 0, or every bootstrap root) carry one; DecideFastPublish checks which they are.
bool RootIdAnnounced(const nlohmann::json* before, const nlohmann::json& now);

}  // namespace ncclop::policy
