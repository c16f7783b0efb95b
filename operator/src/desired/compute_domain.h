// spec.computeDomain: the job's own ComputeDomain of NVIDIA's DRA driver (k8s-dra-driver-gpu,
// resource.nvidia.com/v1beta1), which joins the nodes its pods land on into one IMEX domain so
// that NCCL reaches every GPU of a multi-node NVLink system (GB200/GB300 NVL72) over NVLink.
// The driver makes the ResourceClaimTemplate its spec.channel names; every pod claims the IMEX
// channel from it (pod_shape.h). Named like the job and owned by it, so it goes with the job.
#pragma once

#include "desired/metadata.h"

namespace ncclop::desired {

inline constexpr const char* kComputeDomainGroup = "resource.nvidia.com";
inline constexpr const char* kComputeDomainVersion = "v1beta1";
inline constexpr const char* kComputeDomainResource = "computedomains";

// {spec: {numNodes, channel: {resourceClaimTemplate: {name: <job>-imex-channel}, allocationMode}}}.
// numNodes is always written: the driver's older CRDs require it (0: its default and advice
// where its IMEX daemons find each other by DNS names).
Json ComputeDomain(const api::NcclJob& job);

}  // namespace ncclop::desired
