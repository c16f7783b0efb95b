// Reconcile(key) for one NcclJob: observe the job and its children (controller/observe.h),
// ask policy::Decide what should change, and carry the Plan out in the order plan.h gives.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "controller/events.h"
#include "controller/job_memory.h"
#include "controller/kueue_workload.h"
#include "controller/observe.h"
#include "controller/reconcile_result.h"
#include "desired/pod.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "metrics/metrics.h"
#include "policy/plan.h"

namespace ncclop::controller {

class Reconciler {
 public:
  // status_counts_interval: a status that changed in its pod counts alone is written at most
  // once per this long per job (status/write_pace.h); zero: at once.
  Reconciler(std::shared_ptr<kube::Client> client, Caches caches, desired::PodOptions pod_options,
             metrics::Metrics* metrics, std::chrono::seconds status_counts_interval);
  ReconcileResult Reconcile(const std::string& key);
  // What the reconciles remember of each job; the fast publish path tells it of its writes.
  JobMemory& memory() { return memory_; }
  // A child EnsureChildren makes was deleted or changed (the controller's watch): the job's next
  // reconcile looks in the caches whether one is missing, and makes sure of them again if so.
  void ChildChanged(const std::string& key);

 private:
  // The plan's steps in plan.h's order; each returns at the first that does not go through.
  ReconcileResult Carry(const JobObservation& seen, const policy::Plan& plan);
  ReconcileResult EnsureChildren(const api::NcclJob& job);
  // Whether a child EnsureChildren makes is not in its cache as this job's (deleted by hand);
  // false for a kind with no cache. Asked only after ChildChanged, so a child created and not
  // yet in its cache costs nothing.
  bool ChildMissing(const api::NcclJob& job) const;
  // The job's env ConfigMap is gone, not the job's, or holds other data than the job's.
  bool EnvConfigMapNotTheJobs(const api::NcclJob& job) const;
  bool CurrentGangPodGroupMissing(const api::NcclJob& job) const;
  ReconcileResult WriteConfigMap(const JobObservation& seen, const policy::Plan& plan);
  // Writes desired's data over `current` (the cached or fresh ConfigMap), conditional on its
  // resourceVersion; one that was another job's (or nobody's) becomes this job's.
  ReconcileResult TakeOverConfigMap(const api::NcclJob& job, const nlohmann::json& current, const nlohmann::json& desired);
  ReconcileResult WriteStatus(const JobObservation& seen, const policy::Plan& plan);
  ReconcileResult JobStillCurrent(const api::NcclJob& job);
  kube::Status DeletePods(const api::NcclJob& job, const policy::Plan& plan);
  // Moves pods to the plan's attempt in place: their attempt label and annotations.
  kube::Status MovePods(const api::NcclJob& job, const policy::Plan& plan);
  // observed::EveryNodeRestartsInPlace over the node cache, read again at most once a second
  // (a big job's start reconciles it for every pod event).
  bool NodesRestartInPlace();
  // The first refusal or error (policy::SummarizeCreates); remembers the verdict that fails
  // the job (JobMemory::RememberVerdict) or records the PodCreateFailed event.
  kube::Status CreatePods(const api::NcclJob& job, const policy::Plan& plan);
  // One APIWarning event per text the API server warned of on the job's pod creates.
  void ReportApiWarnings(const api::NcclJob& job, const std::vector<std::string>& warnings);
  ReconcileResult DeleteFinishedJob(const api::NcclJob& job);
  // Native gang scheduling (controller/gang_workload.cc).
  bool UsesGang(const api::NcclJob& job) const;
  ReconcileResult EnsureGangWorkload(const api::NcclJob& job);
  ReconcileResult EnsureGangPodGroup(const api::NcclJob& job, int attempt);
  kube::Status DeleteEarlierGangPodGroups(const api::NcclJob& job, int attempt);
  // A gang scheduling object to make, or take over from a deleted job of the same name.
  struct GangObject {
    kube::Resource resource;
    std::string what;  // "Workload", "PodGroup"
    nlohmann::json desired;
    std::function<bool(const nlohmann::json& existing)> fits;
    // Whether the object the API server returned on create kept what was asked (null: it did).
    std::function<bool(const nlohmann::json& created)> kept;
  };
  ReconcileResult CreateOrAdoptGangObject(const api::NcclJob& job, const GangObject& object);

  std::shared_ptr<kube::Client> client_;
  Caches caches_;
  desired::PodOptions pod_options_;
  metrics::Metrics* metrics_;
  std::chrono::seconds status_counts_interval_;
  EventRecorder events_;
  // Every per-job fact kept between reconciles (children made sure of, pod create verdicts, a
  // missing priority class), under one lock.
  JobMemory memory_;
  KueueWorkloads kueue_;  // the Kueue steps (controller/kueue_workload.h)
  std::mutex nodes_mu_;
  std::chrono::steady_clock::time_point nodes_read_at_;  // guarded by nodes_mu_
  bool nodes_restart_in_place_ = false;                  // guarded by nodes_mu_
  // The API server refused or dropped the restart rules of a pod made for Auto (its gates are off
  // although the nodes declare the feature): Auto recreates pods from then on, in this process.
  std::atomic<bool> in_place_refused_ = false;
};

}  // namespace ncclop::controller
