// The id list of an attempt from its bootstrap root pods (spec.network.bootstrapRoots; pod 0
// alone by default): each root pod's sidecar annotates its own pod with its trainer's id, and the
// list is published only once every root pod of the attempt has reported an id of that attempt,
// in root order (contract/bootstrap_roots.h). Never a mix of attempts: a root pod of another
// attempt, being deleted or failed, or whose id is of another attempt, counts as not reported.
// Pure; the publish rule (publish_rule.h), which both the full reconcile and the fast path ask,
// uses it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/nccl_job.h"
#include "observed/attempt.h"

namespace ncclop::policy {

struct RootIds {
  std::optional<std::string> list;  // the ConfigMap's uniqueId: "<base64>[,<base64>...]" (never logged)
  std::string missing;              // when not set: the first root pod without a usable id, and why
};

// `view` is the job's own pods (another job's of the same name left out) sorted for the attempt.
RootIds CollectRootIds(const api::NcclJob& job, const observed::AttemptView& view);

// The ConfigMap's list form of ids, parsed: one entry per root (empty entries kept, so a broken
// list shows its length). Used by the tests and to count the ids the ConfigMap holds.
std::vector<std::string> SplitIdList(const std::string& list);

}  // namespace ncclop::policy
