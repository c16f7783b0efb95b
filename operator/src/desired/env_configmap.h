// ConfigMap <job>-nccl-env-<hash>: the values of the env contract that are the same in every pod
// of the job (docs/contracts.md, "Env injected"), read by every container of its pods through
// envFrom. Immutable: a kubelet reads it once and does not watch it, and every value in it is
// fixed for the job's UID (its name, namespace and UID, and what follows from replicas and
// gpusPerPod, both immutable). What may differ between pods or attempts stays in each pod's env.
// <hash> is of its data, the UID among it: other data (another job of the name, or a release that
// carries other keys) is another ConfigMap, and pods keep the one they were made with.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "desired/metadata.h"

namespace ncclop::desired {

using EnvValues = std::vector<std::pair<std::string, std::string>>;

// The contract's variables fixed for the job's UID, in the order the docs list them.
EnvValues JobEnv(const api::NcclJob& job);

// <job>-nccl-env-<hash>: <hash> is 10 hex digits of FNV-1a 64 of JobEnv's names and values.
std::string EnvConfigMapName(const api::NcclJob& job);

// The ConfigMap that carries JobEnv(job).
Json EnvConfigMap(const api::NcclJob& job);

// <job>-<i>.<job>.<namespace>.svc:<port>, pod i's stable DNS name and PaddlePaddle's port.
std::string PaddleEndpoint(const api::NcclJob& job, int index);

// `{configMapRef: {name: <job>-nccl-env-<hash>}}`, the envFrom entry every container gets last;
// `job_env` is JobEnv(job), which a caller that needs it too computes once.
Json EnvFromJob(const api::NcclJob& job, const EnvValues& job_env);

}  // namespace ncclop::desired
