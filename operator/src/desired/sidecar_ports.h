// The sidecar's two ports (id API on 127.0.0.1, probes) for one job. A pod on the host's
// network shares the node's ports with every other hostNetwork pod there, so fixed ports would
// let only one such job per node: a hostNetwork job gets a pair of its own, derived from its
// UID (every pod of the job agrees, and a restarted operator chooses the same), unless
// spec.network.sidecarPort names one.
#pragma once

#include "api/nccl_job.h"

namespace ncclop::desired {

struct SidecarPorts {
  int api = 0;    // NCCLJOB_SIDECAR_URL, --listen 127.0.0.1:api
  int probe = 0;  // readiness and liveness, --probe-listen 0.0.0.0:probe
};

inline constexpr int kHostNetworkPortBase = 20000;  // pairs 20000/20001 .. 29998/29999
inline constexpr int kHostNetworkPortPairs = 5000;

bool UsesHostNetwork(const api::NcclJob& job);
SidecarPorts ChooseSidecarPorts(const api::NcclJob& job);

}  // namespace ncclop::desired
