// The one rule for publishing an id: may the root pods' ids of the current attempt go out now?
// Both writers of the ConfigMap ask it: the full reconcile (policy/decide.cc) and the fast
// path (controller/publisher.cc, policy/fast_publish.h), which runs as soon as a root pod
// reports its id. Pure.
#pragma once

#include <optional>
#include <string>

#include "api/nccl_job.h"
#include "desired/configmap.h"
#include "observed/attempt.h"
#include "observed/configmap.h"

namespace ncclop::policy {

struct PublishDecision {
  std::optional<desired::PublishedId> publish;  // set: write this id for status.attempt
  std::string skipped_because;                  // when not set, why (for debug logs; never the id)
  // Not yet, but soon: only some pods of the attempt are in the cache (still being created),
  // or a pod of another attempt is still there (being removed).
  bool retry_soon = false;
};

// Publishes only when the job is active (not deleted, invalid, finished, suspended or between
// attempts); the root pod of `status.attempt` (the status the caller acts on) is alive and
// reports an id of that attempt; the ConfigMap does not hold that attempt's id yet; every pod
// of the attempt is in the cache, because from then on a missing pod counts as one that
// disappeared (failure_policy.h) and fails the attempt; no pod of another attempt is left
// (the new attempt's pods are made while the old ones go, policy/decide.cc); and,
// with several bootstrap roots, every root pod reported an id of the attempt (root_ids.h):
// then their list is published, in root order.
PublishDecision DecidePublish(const api::NcclJob& job, const api::NcclJobStatus& status,
                              const observed::AttemptView& attempt, const observed::ObservedConfigMap& configmap,
                              api::Time now);

}  // namespace ncclop::policy
