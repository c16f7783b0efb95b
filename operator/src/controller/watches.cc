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
// Nodes: only for failurePolicy.restartStrategy Auto (observed/node_features.h).
constexpr const char* kNodesServed = "nodes are listed: restartStrategy Auto restarts in place where every node can";
constexpr const char* kNodesNotServed = "nodes cannot be listed: restartStrategy Auto recreates pods";
// NVIDIA's ComputeDomains: only then can a job with spec.computeDomain run.
constexpr const char* kComputeDomainsServed = "ComputeDomains (resource.nvidia.com/v1beta1) are served: spec.computeDomain can be used";
constexpr const char* kComputeDomainsNotServed =
    "ComputeDomains (resource.nvidia.com/v1beta1) are not served (or not allowed): jobs with spec.computeDomain fail";
}  // namespace

std::vector<Watch> Watches(desired::GangApi gang) {
  // Services, Roles, RoleBindings and ServiceAccounts matter only when one is deleted (or changes
  // owner); so do the gang scheduler's Workloads and PodGroups, ComputeDomains, and the job's env
  // ConfigMap (the id's ConfigMap is read too).
  std::vector<Watch> watches = {
      {.name = "nccljobs", .resource = kNcclJobs, .of = Of::kJobs, .queue_job = true, .cache = &Caches::jobs},
      {.name = "pods", .resource = res::kPods, .keep = Keep::kPodFacts, .index_by_job = true,
       .remember_gone_disrupted = true, .queue_job = true, .publish_root_id = true, .cache = &Caches::pods},
      {.name = "configmaps", .resource = res::kConfigMaps, .queue_job = true, .remake_when_gone = true,
       .cache = &Caches::configmaps},
      {.name = "workloads", .resource = kKueueWorkloads, .queue_job = true, .served = kKueueServed,
       .not_served = kKueueNotServed, .cache = &Caches::kueue_workloads},
      {.name = "scheduling-workloads", .resource = GangWorkloads(gang), .queue_job = true, .remake_when_gone = true,
       .cache = &Caches::gang_workloads},
      {.name = "scheduling-podgroups", .resource = GangPodGroups(gang), .index_by_job = true, .queue_job = true,
       .remake_when_gone = true, .cache = &Caches::gang_podgroups},
      {.name = "services", .resource = res::kServices, .keep = Keep::kOwnership, .remake_when_gone = true,
       .cache = &Caches::services},
      {.name = "roles", .resource = res::kRoles, .keep = Keep::kOwnership, .remake_when_gone = true,
       .cache = &Caches::roles},
      {.name = "rolebindings", .resource = res::kRoleBindings, .keep = Keep::kOwnership, .remake_when_gone = true,
       .cache = &Caches::role_bindings},
      {.name = "serviceaccounts", .resource = res::kServiceAccounts, .keep = Keep::kOwnership, .remake_when_gone = true,
       .cache = &Caches::service_accounts},
      {.name = "computedomains", .resource = kComputeDomains, .keep = Keep::kOwnership, .remake_when_gone = true,
       .served = kComputeDomainsServed, .not_served = kComputeDomainsNotServed, .cache = &Caches::compute_domains},
      {.name = "nodes", .resource = res::kNodes, .of = Of::kNodes, .keep = Keep::kNodeFeatures, .served = kNodesServed,
       .not_served = kNodesNotServed, .cache = &Caches::nodes},
  };
  std::erase_if(watches, [gang](const Watch& w) {
    return (w.cache == &Caches::gang_workloads && gang == desired::GangApi::kNone) ||
           (w.cache == &Caches::gang_podgroups && !desired::GangHasPodGroups(gang));
  });
  return watches;
}

kube::InformerOptions InformerOptionsFor(const Watch& watch, const std::string& ns) {
  kube::InformerOptions options;
  options.namespace_ = ns;
  options.name = watch.name;
  if (watch.of == Of::kJobs) {
    // A periodic resync is the safety net for anything a watch missed and for TTL/backoff
    // timers lost with a restart.
    options.resync_period = std::chrono::seconds(300);
  } else if (watch.of == Of::kChildren) {
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
    case Keep::kNodeFeatures:
      options.transform = cache::TrimNode;
      break;
  }
  return options;
}

}  // namespace ncclop::controller
