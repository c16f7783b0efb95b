// The id publish fast path: when a root pod reports its id, the ConfigMap is written
// straight away (controller/publisher.cc) instead of after the full reconcile of the job
// (which, for a job that is creating a thousand pods, holds the job's queue key for seconds).
// Whether an id may be published is policy/publish_rule.h, the full reconcile's rule too; the
// full reconcile stays the level-triggered backstop and writes the same ConfigMap content, so
// either path may win. Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "policy/publish_rule.h"

namespace ncclop::policy {

// The publish rule, plus what the fast path's write needs: it only fills in the id of a
// ConfigMap that is this job's UID and that the full reconcile already set to the attempt
// (the reconcile resets it to an attempt before any pod of it exists, and takes over one left
// by a deleted job of the same name).
PublishDecision DecideFastPublish(const api::NcclJob& job, const observed::AttemptView& attempt,
                                  const observed::ObservedConfigMap& configmap, api::Time now);

// True when `now` is a pod of a job (an index label) whose id annotation (or its attempt) is new
// compared with `before` (nullptr for an added pod): the moment to try the fast path. Only root
// pods (pod 0, or every bootstrap root) carry one; DecideFastPublish checks which they are.
bool RootIdAnnounced(const nlohmann::json* before, const nlohmann::json& now);

}  // namespace ncclop::policy
