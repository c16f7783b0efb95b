// Which version of Kubernetes' native gang scheduling the API server serves (desired/gang_workload.h):
// asked at start, newest first, by listing the job-labelled Workloads (and PodGroups, where the
// version has them) as the operator itself would, so a version that is served but not allowed by
// RBAC counts as not served. Asked again while running (Controller), since an API server may be
// upgraded or reconfigured under a running operator.
#pragma once

#include <string>

#include "desired/gang_workload.h"
#include "kube/client.h"

namespace ncclop::controller {

struct GangApiAnswer {
  desired::GangApi api = desired::GangApi::kNone;
  std::string why_not;  // when kNone: what each version answered
  // Every newer version was answered for certain (not found, or not allowed): false when one
  // failed otherwise (a timeout, an unavailable API server), so the answer may be wrong.
  bool certain = true;
};

GangApiAnswer FindGangApi(kube::Client& client, const std::string& ns);

// The line the operator logs for an answer.
std::string DescribeGangApi(desired::GangApi api);

}  // namespace ncclop::controller
