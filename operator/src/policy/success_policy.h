// An attempt succeeds when the trainer of every one of its pods exited 0. The sidecar's exit
// does not count: it is stopped by the kubelet once the trainer is done.
#pragma once

#include <vector>

#include "policy/observed.h"

namespace ncclop::policy {

bool AttemptSucceeded(const std::vector<ObservedPod>& pods, int attempt, int replicas);

}  // namespace ncclop::policy
