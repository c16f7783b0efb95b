// Least privilege for a job's pods: their ServiceAccount may read exactly the job's ConfigMap
// and patch exactly the root pod (where the root sidecar reports the id). Both rules name
// their object by resourceNames, so a pod cannot touch another job.
//
// The pods keep the ServiceAccount their template names (cloud workload identity, image pull
// secrets); only a template naming none runs as the per-job <job>-nccl. The Role is bound to
// whichever it is, so every pod running as that ServiceAccount (other jobs' pods too, when
// jobs share one) can read this job's id: jobs that must not see each other's ids need
// ServiceAccounts of their own.
#pragma once

#include <string>

#include "desired/metadata.h"

namespace ncclop::desired {

// The ServiceAccount the job's pods run as: template.spec.serviceAccountName (or the deprecated
// serviceAccount), else <job>-nccl.
std::string PodServiceAccountName(const api::NcclJob& job);
// True when the pods run as the per-job ServiceAccount, which the operator then creates.
bool UsesJobServiceAccount(const api::NcclJob& job);

Json ServiceAccount(const api::NcclJob& job);
Json Role(const api::NcclJob& job);
Json RoleBinding(const api::NcclJob& job);

}  // namespace ncclop::desired
