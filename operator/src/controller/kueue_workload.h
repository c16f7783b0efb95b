// The Kueue steps of a reconcile, for a job labelled kueue.x-k8s.io/queue-name: its one Kueue
// Workload (kueue.x-k8s.io; desired/kueue_workload.h, observed/kueue_workload.h,
// policy/admission.h) is created once, with the priority of its class
// (desired/kueue_workload_priority.h: read then, and again when the job's priority-class label
// names another WorkloadPriorityClass); it is marked Finished when the job ends so Kueue
// releases its quota; after an eviction its quota reservation is cleared once the job's pods
// are gone, so Kueue queues it again; spec.suspend deactivates it; its PodsReady condition
// follows the pods; the admitted ResourceFlavors place the pods, and an admission with a topology
// has Kueue's TopologyUngater place each. Not the gang scheduler's
// scheduling.k8s.io Workload (controller/gang_workload.cc).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "api/nccl_job.h"
#include "controller/job_memory.h"
#include "controller/reconcile_result.h"
#include "desired/kueue_workload_priority.h"
#include "desired/pod.h"
#include "kube/client.h"
#include "kube/store.h"
#include "observed/kueue_workload.h"
#include "policy/plan.h"

namespace ncclop::controller {

class KueueWorkloads {
 public:
  // `cache`: the Kueue Workloads' (Caches::kueue_workloads), null where Kueue is not served.
  // `memory`: where a missing priority class is remembered for Decide.
  KueueWorkloads(std::shared_ptr<kube::Client> client, const kube::Store* cache, desired::PodOptions pod_options,
                 JobMemory& memory);

  // Where the API server served no Kueue Workloads at start, a job's queue label is ignored
  // (logged), so the job runs as if it were in no queue.
  void IgnoreQueueUnlessServed(api::NcclJob& job) const;
  // The job's cached Workload (none for a job in no queue, or one of another job UID).
  observed::ObservedKueueWorkload Observe(const api::NcclJob& job) const;
  // Step 1 of plan.h (plan.ensure_kueue_workload): the Workload made, or following the job's
  // priority-class label. Remembers or forgets a missing priority class (and then asks for a
  // reconcile at once, so that Decide says so); nullopt while it is still missing (the rest of
  // the plan goes on: the job's status says why it has no Workload).
  std::optional<ReconcileResult> Ensure(const api::NcclJob& job);
  // Step 7 of plan.h: the Workload marked Finished, its evicted quota released, deactivated or
  // activated again, its PodsReady condition written, in that order; the first error.
  kube::Status Update(const api::NcclJob& job, const policy::Plan& plan);
  // The ResourceFlavors of the job's admission (empty for a job in no queue).
  kube::Result<std::vector<nlohmann::json>> AdmittedFlavors(const api::NcclJob& job) const;
  // Whether the admission places the job's pods by topology (Kueue's TAS): they are then made
  // gated for Kueue's TopologyUngater (desired/kueue_topology.h).
  bool AdmittedWithTopology(const api::NcclJob& job) const { return Observe(job).topology_assigned; }

  // No watch on priority classes: a job whose class does not exist looks again this often.
  static constexpr std::chrono::seconds kPriorityClassRetryInterval{10};  // REFERENCE.md says 10 s

 private:
  kube::Status EnsureWorkload(const api::NcclJob& job);
  // The priority the Workload gets (desired/kueue_workload_priority.h), from the class read now.
  kube::Result<desired::KueueWorkloadPriority> ReadPriority(const desired::PriorityClassToRead& what) const;
  // A Workload whose job's label now names another WorkloadPriorityClass follows it.
  kube::Status FollowPriorityLabel(const api::NcclJob& job, const nlohmann::json& workload);
  kube::Status Finish(const api::NcclJob& job, const policy::Plan::KueueWorkloadFinish& finish);
  kube::Status ReleaseQuota(const api::NcclJob& job);
  kube::Status SetActive(const api::NcclJob& job, bool active);
  kube::Status SetPodsReady(const api::NcclJob& job, const policy::KueuePodsReady& pods_ready);

  std::shared_ptr<kube::Client> client_;
  const kube::Store* cache_;
  desired::PodOptions pod_options_;
  JobMemory& memory_;
};

}  // namespace ncclop::controller
