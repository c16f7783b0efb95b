// Reconcile(key) for one NcclJob: read the job and its children from the informer caches,
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
#include "desired/pod.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "metrics/metrics.h"
#include "policy/plan.h"

namespace ncclop::controller {

inline const kube::Resource kNcclJobs{"nccl.dev", "v1alpha1", "nccljobs", true};
inline const kube::Resource kKueueWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads", true};
inline const kube::Resource kKueueResourceFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
inline const kube::Resource kSchedulingWorkloads{"scheduling.k8s.io", "v1alpha1", "workloads", true};

struct Caches {
  const kube::Informer* jobs;
  const kube::Informer* pods;        // indexed by kPodsByJob
  const kube::Informer* configmaps;  // filtered to the job label
  const kube::Informer* workloads = nullptr;  // Kueue Workloads (job label); null: Kueue not served
  // Whether the API server served scheduling.k8s.io/v1alpha1 Workloads at start (native gang
  // scheduling, desired/gang.h). No cache: the operator only creates them.
  bool scheduling_workloads_served = false;
};
inline constexpr const char* kPodsByJob = "job";

struct ReconcileResult {
  ReconcileResult(kube::Status s = {}, std::optional<std::chrono::seconds> after = std::nullopt)  // NOLINT
      : status(std::move(s)), requeue_after(after) {}
  kube::Status status;
  std::optional<std::chrono::seconds> requeue_after;
};

class Reconciler {
 public:
  Reconciler(std::shared_ptr<kube::Client> client, Caches caches, desired::PodOptions pod_options,
             metrics::Metrics* metrics);
  ReconcileResult Reconcile(const std::string& key);

 private:
  kube::Status EnsureChildren(const api::NcclJob& job);
  kube::Status WriteConfigMap(const api::NcclJob& job, const policy::Plan& plan);
  // Writes desired's data over `current` (the cached or fresh ConfigMap), conditional on its
  // resourceVersion; one that was another job's (or nobody's) becomes this job's.
  kube::Status TakeOverConfigMap(const api::NcclJob& job, const nlohmann::json& current, const nlohmann::json& desired);
  kube::Status WriteStatus(const api::NcclJob& job, const policy::Plan& plan, const nlohmann::json& object);
  kube::Status JobStillCurrent(const api::NcclJob& job);
  kube::Status DeletePods(const api::NcclJob& job, const policy::Plan& plan);
  kube::Status CreatePods(const api::NcclJob& job, const policy::Plan& plan);
  // Kueue (controller/workload.cc).
  policy::ObservedWorkload ObserveWorkload(const api::NcclJob& job) const;
  kube::Status EnsureWorkload(const api::NcclJob& job);
  kube::Status FinishWorkload(const api::NcclJob& job, const policy::Plan::WorkloadFinish& finish);
  kube::Status ReleaseWorkloadQuota(const api::NcclJob& job);
  kube::Status SetWorkloadActive(const api::NcclJob& job, bool active);
  // The ResourceFlavors of the job's admission (empty for a job in no queue).
  kube::Result<std::vector<nlohmann::json>> AdmittedFlavors(const api::NcclJob& job) const;
  // Native gang scheduling (controller/gang.cc).
  bool UsesGang(const api::NcclJob& job) const;
  kube::Status EnsureSchedulingWorkload(const api::NcclJob& job);

  std::shared_ptr<kube::Client> client_;
  Caches caches_;
  desired::PodOptions pod_options_;
  metrics::Metrics* metrics_;
  EventRecorder events_;
  // Jobs (namespace/name -> UID) whose ServiceAccount/Role/RoleBinding/Service this process
  // already made sure of, to spare the API server five creates per reconcile. Reset by a
  // restart; an entry goes when its job is gone.
  std::mutex ensured_mu_;
  std::map<std::string, std::string> ensured_;  // guarded by ensured_mu_

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
};

}  // namespace ncclop::controller
