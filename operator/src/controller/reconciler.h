// Reconcile(key) for one NcclJob: observe the job and its children (controller/observe.h),
// ask policy::Decide what should change, and carry the Plan out in the order plan.h gives.
#pragma once

#include <chrono>
#include <memory>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "controller/events.h"
#include "controller/observe.h"
#include "controller/reconcile_result.h"
#include "desired/pod.h"
#include "desired/kueue_workload_priority.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "metrics/metrics.h"
#include "policy/plan.h"
#include "policy/pod_refusal.h"

namespace ncclop::controller {

class Reconciler {
 public:
  Reconciler(std::shared_ptr<kube::Client> client, Caches caches, desired::PodOptions pod_options,
             metrics::Metrics* metrics);
  ReconcileResult Reconcile(const std::string& key);
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
  ReconcileResult WriteConfigMap(const JobObservation& seen, const policy::Plan& plan);
  // Writes desired's data over `current` (the cached or fresh ConfigMap), conditional on its
  // resourceVersion; one that was another job's (or nobody's) becomes this job's.
  ReconcileResult TakeOverConfigMap(const api::NcclJob& job, const nlohmann::json& current, const nlohmann::json& desired);
  ReconcileResult WriteStatus(const JobObservation& seen, const policy::Plan& plan);
  ReconcileResult JobStillCurrent(const api::NcclJob& job);
  kube::Status DeletePods(const api::NcclJob& job, const policy::Plan& plan);
  // The first refusal or error (policy::SummarizeCreates); remembers the verdict that fails
  // the job (VerdictFor) or records the PodCreateFailed event.
  kube::Status CreatePods(const api::NcclJob& job, const policy::Plan& plan);
  ReconcileResult DeleteFinishedJob(const api::NcclJob& job);
  // Kueue (controller/kueue_workload.cc).
  // The cached Workload, and a priority class it needs that does not exist (missing_classes_).
  observed::ObservedKueueWorkload ObserveKueueWorkload(const api::NcclJob& job) const;
  kube::Status EnsureWorkload(const api::NcclJob& job);
  // EnsureWorkload as a step of Carry: remembers or forgets a missing priority class (and then
  // asks for a reconcile at once, so that Decide says so), nullopt while it is still missing
  // (the rest of the plan goes on: the job's status says why it has no Workload).
  std::optional<ReconcileResult> EnsureWorkloadStep(const api::NcclJob& job);
  // The priority the Workload gets (desired/kueue_workload_priority.h), from the class read now.
  kube::Result<desired::KueueWorkloadPriority> ReadWorkloadPriority(const desired::PriorityClassToRead& what) const;
  // A Workload whose job's label now names another WorkloadPriorityClass follows it.
  kube::Status FollowPriorityLabel(const api::NcclJob& job, const nlohmann::json& workload);
  kube::Status FinishWorkload(const api::NcclJob& job, const policy::Plan::KueueWorkloadFinish& finish);
  kube::Status ReleaseWorkloadQuota(const api::NcclJob& job);
  kube::Status SetWorkloadActive(const api::NcclJob& job, bool active);
  kube::Status SetWorkloadPodsReady(const api::NcclJob& job, const policy::KueuePodsReady& pods_ready);
  // The ResourceFlavors of the job's admission (empty for a job in no queue).
  kube::Result<std::vector<nlohmann::json>> AdmittedFlavors(const api::NcclJob& job) const;
  // Native gang scheduling (controller/gang_workload.cc).
  bool UsesGang(const api::NcclJob& job) const;
  ReconcileResult EnsureGangWorkload(const api::NcclJob& job);

  std::shared_ptr<kube::Client> client_;
  Caches caches_;
  desired::PodOptions pod_options_;
  metrics::Metrics* metrics_;
  EventRecorder events_;
  // Jobs (namespace/name -> UID) whose ServiceAccount/Role/RoleBinding/Service (and gang
  // Workload) this process already made sure of, to spare the API server five creates per
  // reconcile; made sure of again when, after ChildChanged, one is gone from its cache
  // (ChildMissing). Reset by a restart; an entry goes when its job is gone.
  std::mutex ensured_mu_;
  std::map<std::string, std::string> ensured_;  // guarded by ensured_mu_
  // Jobs with a child changed since they were last made sure of (ChildChanged), each with the
  // number of the last change, so that only the change looked at is cleared.
  std::map<std::string, std::uint64_t> children_changed_;  // guarded by ensured_mu_
  std::uint64_t child_changes_ = 0;                        // guarded by ensured_mu_
  // Clears the job's change `seen` (0: none) unless a newer one came meanwhile.
  void ClearChildChange(const std::string& key, std::uint64_t seen);

  // The verdict that a job's pods cannot be created (policy/pod_refusal.h: malformed, or
  // Forbidden for longer than failurePolicy.forbiddenRetrySeconds), by namespace/name, for the
  // UID and generation it was made from: the next reconcile hands it to Decide, which fails the
  // job. It is dropped once the Failed status is in the cache (so a lost status write cannot
  // lose it), when the job is gone or its spec changed. A restart forgets it, tries again and
  // learns it again.
  struct Rejection {
    std::string uid;
    std::int64_t generation = 0;
    policy::PodCreateVerdict verdict;
  };
  policy::PodCreateVerdict VerdictFor(const std::string& key, const api::NcclJob& job);
  // A Forbidden create of the job's current attempt: returns how long creates of that attempt
  // have been refused (0 at the first); a successful round of creates resets it.
  std::chrono::seconds ForbiddenFor(const api::NcclJob& job, int attempt);
  void Forget(const std::string& key);
  std::mutex rejections_mu_;
  std::map<std::string, Rejection> rejections_;  // guarded by rejections_mu_
  struct FirstForbidden {
    std::string uid;
    int attempt = 0;
    std::chrono::steady_clock::time_point at;
  };
  std::map<std::string, FirstForbidden> forbidden_;  // guarded by rejections_mu_

  // The priority class a queued job's Workload needs and that did not exist when last read, by
  // namespace/name, for the job UID it was read for (ObserveKueueWorkload hands the message to
  // Decide); gone once the Workload is made, or its label followed, or the job is gone.
  struct MissingClass {
    std::string uid;
    std::string message;
  };
  mutable std::mutex missing_classes_mu_;
  std::map<std::string, MissingClass> missing_classes_;  // guarded by missing_classes_mu_
};

}  // namespace ncclop::controller
