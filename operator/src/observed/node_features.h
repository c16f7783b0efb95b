// Whether the cluster's nodes restart a pod's containers in place (failurePolicy.restartStrategy
// Auto): every node that takes new pods declares the kubelet feature
// RestartAllContainersOnContainerExits in status.declaredFeatures (1.36+ kubelets). A node that
// does not would never get such a pod from the scheduler (its NodeDeclaredFeatures filter), so
// Auto asks for it only when no node would be left out. Pure, over cache::TrimNode's nodes.
#pragma once

#include <vector>

#include "kube/store.h"

namespace ncclop::observed {

// False for no nodes at all (nothing to say they can).
bool EveryNodeRestartsInPlace(const std::vector<kube::ObjectPtr>& nodes);

}  // namespace ncclop::observed
