// Pod <job>-<index> of one attempt: the user's template plus what the contract adds
// (docs/contracts.md): labels and annotations, hostname/subdomain, the job's
// ServiceAccount, restartPolicy Never, the env contract in every container, the GPU limit on
// the trainer, and the sidecar as a native sidecar (initContainers[0], restartPolicy Always)
// so it starts before and outlives the trainer but never keeps the pod from completing.
#pragma once

#include <string>
#include <vector>

#include "desired/metadata.h"

namespace ncclop::desired {

struct PodOptions {
  std::string sidecar_image = "nccl-sidecar:0.1.0";
};

Json Pod(const api::NcclJob& job, int index, int attempt, const PodOptions& options);

// The contract env for pod `index` of `attempt` (exposed for tests and the docs).
Json ContractEnv(const api::NcclJob& job, int index, int attempt);

}  // namespace ncclop::desired
