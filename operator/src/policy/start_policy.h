// Pods the cluster does not start: the scheduler finds no node (Unschedulable), the kubelet
// cannot pull an image or create or run a container. The job shows the first such pod and
// the cluster's reason at once (condition Running), and gives the attempt up when the pod is
// still blocked spec.initTimeoutSeconds after the attempt started; the failure then restarts
// or fails the job under failurePolicy like any other.
#pragma once

#include <optional>
#include <string>

#include "api/nccl_job.h"
#include "api/time.h"
#include "observed/attempt.h"

namespace ncclop::policy {

struct BlockedStart {
  std::string pod;
  std::string reason;  // the cluster's: "Unschedulable", "ImagePullBackOff", ...
  std::string detail;  // for people: "pod demo-1 cannot start: container trainer: ImagePullBackOff: ..."
};

// The lowest-index pod of the attempt the cluster does not start, if any.
std::optional<BlockedStart> FindBlockedStart(const observed::AttemptView& attempt);

// When an attempt with a blocked pod is given up: initTimeoutSeconds after the attempt started
// (nullopt when the start time is unknown).
std::optional<api::Time> BlockedStartDeadline(const api::NcclJob& job);

}  // namespace ncclop::policy
