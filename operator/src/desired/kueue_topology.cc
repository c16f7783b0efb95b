#include "desired/kueue_topology.h"

#include "contract/names.h"
#include "desired/kueue_workload.h"

namespace ncclop::desired {

Json KueueTopologyRequest(const api::KueueTopologyRequest& request) {
  Json out = {{"podIndexLabel", std::string(contract::kLabelIndex)}};
  if (!request.required.empty()) out["required"] = request.required;
  if (!request.preferred.empty()) out["preferred"] = request.preferred;
  if (request.unconstrained) out["unconstrained"] = *request.unconstrained;
  if (!request.slice_required.empty()) {
    out["podSetSliceRequiredTopology"] = request.slice_required;
    out["podSetSliceSize"] = request.slice_size;
  }
  if (request.slice_constraints.is_array()) out["podsetSliceRequiredTopologyConstraints"] = request.slice_constraints;
  return out;
}

void GateForTopology(Json& pod, const api::NcclJob& job) {
  Json& metadata = pod["metadata"];
  metadata["annotations"][std::string(contract::kAnnotationKueueWorkload)] = contract::KueueWorkloadName(job.name);
  metadata["labels"][std::string(contract::kLabelKueuePodSet)] = kKueuePodSetName;
  if (!job.spec.kueue_topology.NamesPlacement()) {
    metadata["annotations"][std::string(contract::kAnnotationKueueUnconstrainedTopology)] = "true";
  }
  Json& gates = pod["spec"]["schedulingGates"];
  if (!gates.is_array()) gates = Json::array();
  const Json gate = {{"name", std::string(contract::kKueueTopologySchedulingGate)}};
  for (const Json& g : gates) {
    if (g == gate) return;
  }
  gates.push_back(gate);
}

}  // namespace ncclop::desired
