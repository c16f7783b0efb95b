// The priority of a job's Kueue Workload, chosen as Kueue's own job integrations choose it
// (docs/shared-clusters.md): the WorkloadPriorityClass named by the job's label
// kueue.x-k8s.io/priority-class; else the PriorityClass named by the pod template's
// priorityClassName; else the cluster's globalDefault PriorityClass (the lowest value where
// there are several); else none, priority 0. Kueue orders the Workloads waiting in a
// ClusterQueue, and chooses whom to preempt, by spec.priority; spec.priorityClassRef says
// where it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/nccl_job.h"

namespace ncclop::desired {

// Which priority class to read for a job: a WorkloadPriorityClass or a PriorityClass by name,
// or (kind kDefault) every PriorityClass, to find the globalDefault one.
struct PriorityClassToRead {
  enum class Kind { kWorkloadPriorityClass, kPriorityClass, kDefault };
  Kind kind = Kind::kDefault;
  std::string name;
};
PriorityClassToRead PriorityClassOf(const api::NcclJob& job);

// spec.priorityClassRef (null: none) and spec.priority of the Workload.
struct KueueWorkloadPriority {
  api::Json class_ref;
  std::int32_t priority = 0;
};

// From the class read for `what` (its top-level `value`); for kDefault, `classes` is the list
// of PriorityClasses. A class without an integer value counts as 0.
KueueWorkloadPriority PriorityFrom(const PriorityClassToRead& what, const std::vector<api::Json>& classes);

// Sets spec.priorityClassRef (or leaves it out) and spec.priority on a Workload.
void SetPriority(api::Json& workload, const KueueWorkloadPriority& priority);

// For an existing Workload of the job: the WorkloadPriorityClass to move it to when the job's
// label now names another one, as Kueue's integrations follow a changed label: only where its
// priority came from a WorkloadPriorityClass, or from no class while it holds no quota (Kueue
// refuses a class ref added to a Workload with quota reserved). A priority from a PriorityClass
// stays. nullopt: leave the Workload as it is.
std::optional<std::string> WorkloadPriorityClassToFollow(const api::NcclJob& job, const api::Json& workload,
                                                         bool quota_reserved);

// A merge patch of the Workload (conditional on its resourceVersion) that gives it `priority`.
api::Json SetPriorityPatch(const api::Json& workload, const KueueWorkloadPriority& priority);

}  // namespace ncclop::desired
