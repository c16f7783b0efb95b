// What the trainer container gets beyond the template, apart from the env contract: its GPUs, a
// memory-backed /dev/shm and, with spec.computeDomain, the claim of the ComputeDomain's IMEX
// channel. desired::Pod (pod.h) calls ShapeTrainer on every pod it makes, so the Kueue Workload's
// pod set (kueue_workload.h, made from pod 0) says the same.
//
// A job keeps the shape its pods were first made in (status.podShape): an upgraded operator
// makes a job that an older one started as that one did, so no running job's pods change
// under it (a restarted attempt included), and a template the older operator accepted is
// never refused mid-job.
#pragma once

#include <string>

#include "desired/metadata.h"

namespace ncclop::desired {

// The shapes, newest last:
//   1  (before status.podShape existed) the GPU limit is always set, over the template's own
//      value and beside the template's device claims; no /dev/shm.
//   2  the GPU request only where the template makes none (no DRA claims, no value of its own:
//      a value other than gpusPerPod is refused, GpuRequestConflict); /dev/shm (spec.shmSize).
inline constexpr int kPodShape = 2;

// The shape of the job's pods: status.podShape once recorded; else this operator's for a job
// that has not started an attempt, 1 for one an older operator started.
int PodShapeOf(const api::NcclJob& job);

// Gives the trainer of `pod_spec` (the template's spec, being made into the pod's) its GPUs as
// `gpu_resource` (an extended resource name: nvidia.com/gpu, amd.com/gpu, a MIG profile), its
// /dev/shm and the ComputeDomain channel claim, each as the job's shape says.
void ShapeTrainer(const api::NcclJob& job, const std::string& gpu_resource, Json& pod_spec);

// Why the template's trainer cannot be given its GPUs: it asks for `gpu_resource` itself (in
// limits or requests) in another number than spec.gpusPerPod, which the ranks are counted by.
// "" when it does not, asks for exactly that many, or gpusPerPod is 0 (one rank per pod, which
// uses what the template asks for as it likes). A message for InvalidSpec naming both.
std::string GpuRequestConflict(const api::NcclJob& job, const std::string& gpu_resource);

}  // namespace ncclop::desired
