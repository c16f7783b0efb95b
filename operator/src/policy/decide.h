// Reconcile as a pure function: (job, observed children, now) -> Plan (plan.h, which also gives
// the order the reconciler carries a Plan out in). decide.cc is the state machine.
#pragma once

#include <vector>

#include "api/nccl_job.h"
#include "api/time.h"
#include "observed/configmap.h"
#include "observed/pod.h"
#include "observed/kueue_workload.h"
#include "policy/plan.h"
#include "policy/pod_refusal.h"

namespace ncclop::policy {

// A non-empty pod_create_verdict fails the job with its reason and message.
// kueue_workload: the job's Kueue Workload (only read for a job with a queue name).
Plan Decide(const api::NcclJob& job, const std::vector<observed::ObservedPod>& pods,
            const observed::ObservedConfigMap& configmap, api::Time now, const PodCreateVerdict& pod_create_verdict = {},
            const observed::ObservedKueueWorkload& kueue_workload = observed::ObservedKueueWorkload{});

}  // namespace ncclop::policy
