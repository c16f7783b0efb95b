// Least privilege for a job's pods: their ServiceAccount may read exactly the job's ConfigMap
// and patch exactly the root pod (where the root sidecar reports the id). Both rules name
// their object by resourceNames, so a pod cannot touch another job.
#pragma once

#include "desired/metadata.h"

namespace ncclop::desired {

Json ServiceAccount(const api::NcclJob& job);
Json Role(const api::NcclJob& job);
Json RoleBinding(const api::NcclJob& job);

}  // namespace ncclop::desired
