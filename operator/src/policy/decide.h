// Reconcile as a pure function: (job, observed children, now) -> Plan (plan.h, which also gives
// the order the reconciler carries a Plan out in). decide.cc is the state machine.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/nccl_job.h"
#include "api/time.h"
#include "observed/configmap.h"
#include "observed/pod.h"
#include "observed/kueue_workload.h"
#include "policy/plan.h"
#include "policy/pod_refusal.h"

namespace ncclop::policy {

// What the controller remembers of a job between reconciles that no object in the cluster holds
// (controller/job_memory.h keeps it; a restart forgets it and learns it again). Decide reads
// only this copy, so it stays a function of its inputs.
struct Remembered {
  // Its pods cannot be created: fails the job with this reason and message. Empty: none.
  PodCreateVerdict pod_create_verdict = {};
  // The priority class its Kueue Workload needs (to be made, or to follow the job's
  // priority-class label) does not exist; says which. "" else.
  std::string priority_class_missing = {};
  // failurePolicy.restartStrategy Auto: every schedulable node declares the kubelet's restart
  // in place (controller/node_features.h); false when unknown.
  bool nodes_restart_in_place = false;
  // The job's pods form a gang of the scheduler's (desired::UsesGangScheduling): a pod made
  // alone could not be admitted, so an attempt that must make any pod again makes them all.
  bool gang_scheduled = false;
  // The latest attempt whose id this process wrote for the job's UID (the fast path's writes
  // too; 0: none): the cached ConfigMap may not show the write yet.
  int id_written_attempt = 0;
  // Pods of the job's current attempt, by index, whose delete event showed them disrupted
  // (observed::GoneDisruptedOf): a reconcile may see them only gone (FindAttemptFailure).
  std::map<int, observed::Disruption> gone_disrupted = {};
};

// kueue_workload: the job's Kueue Workload (only read for a job with a queue name).
Plan Decide(const api::NcclJob& job, const std::vector<observed::ObservedPod>& pods,
            const observed::ObservedConfigMap& configmap, api::Time now, const Remembered& remembered = {},
            const observed::ObservedKueueWorkload& kueue_workload = observed::ObservedKueueWorkload{});

}  // namespace ncclop::policy
