#include "controller/watches.h"

#include <chrono>

#include "cache/trim.h"
#include "contract/names.h"

namespace ncclop::controller {
namespace {

namespace res = kube::resources;
using Of = Watch::Of;
using Keep = Watch::Keep;

// Kueue's Workloads: only then are jobs labelled kueue.x-k8s.io/queue-name admitted through one.
constexpr const char* kKueueServed = "Kueue Workloads are served: jobs with a queue label wait for admission";
constexpr const char* kKueueNotServed = "Kueue Workloads are not served (or not allowed): the queue label is ignored";
// scheduling.k8s.io/v1alpha1 Workloads (Kubernetes 1.35+ with the GenericWorkload gate): then jobs
// with spec.gangScheduling Auto are gang scheduled (desired/gang_workload.h).
constexpr const char* kGangServed =
    "scheduling.k8s.io/v1alpha1 Workloads are served: jobs are gang scheduled (spec.gangScheduling Auto)";
constexpr const char* kGangNotServed =
    "scheduling.k8s.io/v1alpha1 Workloads are not served (or not allowed): no native gang scheduling";

}  // namespace

std::span<const Watch> Watches() {
  // Built at the first call, after the resources it copies. Services, Roles, RoleBindings and
  // ServiceAccounts matter only when one is deleted (or changes owner).
  static const Watch kWatches[] = {
      {.name = "nccljobs", .resource = kNcclJobs, .of = Of::kJobs, .queue_job = true, .cache = &Caches::jobs},
      {.name = "pods", .resource = res::kPods, .keep = Keep::kPodFacts, .index_by_job = true, .queue_job = true,
       .publish_root_id = true, .cache = &Caches::pods},
      {.name = "configmaps", .resource = res::kConfigMaps, .queue_job = true, .cache = &Caches::configmaps},
      {.name = "workloads", .resource = kKueueWorkloads, .queue_job = true, .served = kKueueServed,
       .not_served = kKueueNotServed, .cache = &Caches::kueue_workloads},
      {.name = "scheduling-workloads", .resource = kGangWorkloads, .queue_job = true, .remake_when_gone = true,
       .served = kGangServed, .not_served = kGangNotServed, .cache = &Caches::gang_workloads},
      {.name = "services", .resource = res::kServices, .keep = Keep::kOwnership, .remake_when_gone = true,
       .cache = &Caches::services},
      {.name = "roles", .resource = res::kRoles, .keep = Keep::kOwnership, .remake_when_gone = true,
       .cache = &Caches::roles},
      {.name = "rolebindings", .resource = res::kRoleBindings, .keep = Keep::kOwnership, .remake_when_gone = true,
       .cache = &Caches::role_bindings},
      {.name = "serviceaccounts", .resource = res::kServiceAccounts, .keep = Keep::kOwnership, .remake_when_gone = true,
       .cache = &Caches::service_accounts},
  };
  return kWatches;
}

kube::InformerOptions InformerOptionsFor(const Watch& watch, const std::string& ns) {
  kube::InformerOptions options;
  options.namespace_ = ns;
  options.name = watch.name;
  if (watch.of == Of::kJobs) {
    // A periodic resync is the safety net for anything a watch missed and for TTL/backoff
    // timers lost with a restart.
    options.resync_period = std::chrono::seconds(300);
  } else {
    options.label_selector = std::string(contract::kLabelJobName);  // "has the label"
  }
  switch (watch.keep) {
    case Keep::kWhole:
      break;
    case Keep::kPodFacts:
      // Only what observed/pod.cc reads of a pod is cached (see cache/trim.h); smaller list
      // pages bound the memory of a relist of full pods. TrimPod drops the spec too: a watched
      // pod's spec (~40 % of it as served) is not parsed.
      options.transform = cache::TrimPod;
      options.list_page_size = 100;
      options.drop_at_decode = {"spec"};
      break;
    case Keep::kOwnership:
      options.transform = cache::TrimToOwnership;
      break;
  }
  return options;
}

}  // namespace ncclop::controller
