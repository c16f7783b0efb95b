// Kueue's Topology Aware Scheduling (TAS) for a job in a Kueue queue, the way Kueue's own job
// integrations ask for it and start their pods (Kueue v0.17: pkg/controller/jobframework/tas.go,
// pkg/podset/podset.go FromAssignment, pkg/controller/tas/topology_ungater.go). The operator does
// not place the pods itself: Kueue's TopologyUngater does, one patch a pod (docs/shared-clusters.md
// "Topology-aware placement" says why).
#pragma once

#include "api/nccl_job.h"
#include "desired/metadata.h"

namespace ncclop::desired {

// The Workload pod set's topologyRequest (Kueue v1beta2 PodSetTopologyRequest) from the job's
// annotations, always with podIndexLabel nccl.dev/index (as Kueue's batch Job integration always
// names its completion index): wherever Kueue assigns a topology, asked for or implied by a
// ResourceFlavor with a topologyName, the ungater then gives pod i the i-th place of the
// assignment, so consecutive pods (NCCL's neighbouring ranks) share the closest domain.
Json KueueTopologyRequest(const api::KueueTopologyRequest& request);

// What the TopologyUngater needs on a pod of a Workload admitted with a topologyAssignment, as
// Kueue's integrations put it there: the scheduling gate kueue.x-k8s.io/topology (it removes the
// gate and writes the pod's domain into its nodeSelector), the annotation kueue.x-k8s.io/workload
// and the label kueue.x-k8s.io/podset it finds the pods by, and, where the template names no
// placement, podset-unconstrained-topology "true" (Kueue counts a pod with none of the three
// annotations as a pod outside TAS, on top of the Workload's own usage).
void GateForTopology(Json& pod, const api::NcclJob& job);

}  // namespace ncclop::desired
