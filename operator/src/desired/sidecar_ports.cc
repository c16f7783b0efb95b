#include "desired/sidecar_ports.h"

#include "contract/names.h"
#include "desired/stable_hash.h"

namespace ncclop::desired {

bool UsesHostNetwork(const api::NcclJob& job) {
  const api::Json& tmpl = job.spec.pod_template;
  if (!tmpl.is_object() || !tmpl.contains("spec") || !tmpl["spec"].is_object()) return false;
  const api::Json& spec = tmpl["spec"];
  return spec.contains("hostNetwork") && spec["hostNetwork"].is_boolean() && spec["hostNetwork"].get<bool>();
}

SidecarPorts ChooseSidecarPorts(const api::NcclJob& job) {
  if (job.spec.sidecar_port) return {*job.spec.sidecar_port, *job.spec.sidecar_port + 1};
  if (!UsesHostNetwork(job)) return {contract::kSidecarApiPort, contract::kSidecarProbePort};
  const int api = kHostNetworkPortBase + 2 * static_cast<int>(Fnv1a32(job.uid) % kHostNetworkPortPairs);
  return {api, api + 1};
}

}  // namespace ncclop::desired
