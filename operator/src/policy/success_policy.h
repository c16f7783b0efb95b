// An attempt succeeds when the trainer of every one of its pods exited 0. The sidecar's exit
// does not count: it is stopped by the kubelet once the trainer is done.
#pragma once

#include "observed/attempt.h"

namespace ncclop::policy {

bool AttemptSucceeded(const observed::AttemptView& attempt);

}  // namespace ncclop::policy
