// What the operator keeps of a cached pod. The informer applies TrimPod to every listed or
// watched pod before caching it: a full pod is ~80 KB as a JSON tree (mostly the spec and
// its env contract), the trimmed one a few hundred bytes, which is what lets 100 jobs x 8
// pods fit in ~20 MB. Whatever observed/pod.cc or the controller reads of a pod must be
// kept here (the unit test feeds a trimmed pod through ObservePod to check it).
#pragma once

#include <nlohmann/json.hpp>

namespace ncclop::cache {

// Keeps apiVersion, kind; metadata name, namespace, uid, resourceVersion, labels,
// annotations under nccl.dev/, ownerReferences, deletionTimestamp; status phase, reason,
// message, conditions (type, status), containerStatuses and initContainerStatuses (name,
// ready, state.terminated exitCode and reason). Drops everything else, spec included.
void TrimPod(nlohmann::json& pod);

// What the operator keeps of a cached Service, Role, RoleBinding or ServiceAccount of a job: only
// whether it exists and whose it is (apiVersion, kind; metadata name, namespace, uid,
// resourceVersion, labels, ownerReferences, deletionTimestamp).
void TrimToOwnership(nlohmann::json& object);

// What the operator keeps of a Node: its name, whether it takes new pods (spec.unschedulable)
// and the features its kubelet declares (status.declaredFeatures), for
// observed/node_features.h.
void TrimNode(nlohmann::json& node);

}  // namespace ncclop::cache
