// Kueue's Topology Aware Scheduling as a Kueue user asks for it: the kueue.x-k8s.io/podset-*
// annotations on spec.template.metadata (contract/names.h), read and checked as Kueue v0.17's
// job framework reads and its webhooks check them on a Job's pod template
// (pkg/controller/jobframework/tas.go, tas_validation.go). The operator carries the request to
// its Workload's pod set (desired/kueue_topology.h); a request Kueue would refuse fails the job
// (InvalidSpec) with Kueue's rule in words.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/status.h"

namespace ncclop::api {

struct KueueTopologyRequest {
  std::string required;   // podset-required-topology: a node label every pod's node shares a value of
  std::string preferred;  // podset-preferred-topology: as close to one such domain as fits
  std::optional<bool> unconstrained;  // podset-unconstrained-topology
  // podset-slice-required-topology with podset-slice-size: each run of slice_size consecutive
  // pods shares one domain of that label. Both or neither.
  std::string slice_required;
  int slice_size = 0;
  // podset-slice-required-topology-constraints: null, or Kueue's [{"topology", "size"}] (1 to 3
  // layers, coarsest first; read by Kueue only with its alpha TASMultiLayerTopology gate on).
  nlohmann::json slice_constraints;

  // Whether the template names how the pods are placed (required, preferred or unconstrained).
  // Without it Kueue still assigns a topology where the ResourceFlavor has one (implicit TAS).
  bool NamesPlacement() const { return !required.empty() || !preferred.empty() || unconstrained.has_value(); }
  bool operator==(const KueueTopologyRequest&) const = default;
};

// From spec.template.metadata.annotations (null or an object) of a job of `replicas` pods.
kube::Result<KueueTopologyRequest> ParseKueueTopologyRequest(const nlohmann::json& annotations, int replicas);

}  // namespace ncclop::api
