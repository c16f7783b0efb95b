// Names and keys from docs/contracts.md, in one place. Everything the operator makes for a
// job has a name derived from the job's name alone, so a restarted operator finds it again.
#pragma once

#include <string>
#include <string_view>

namespace ncclop::api {

inline constexpr std::string_view kGroup = "nccl.dev";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "nccl.dev/v1alpha1";
inline constexpr std::string_view kKind = "NcclJob";

inline constexpr std::string_view kLabelJobName = "nccl.dev/job-name";
inline constexpr std::string_view kLabelIndex = "nccl.dev/index";
inline constexpr std::string_view kLabelAttempt = "nccl.dev/attempt";
inline constexpr std::string_view kAnnotationUniqueId = "nccl.dev/unique-id";
inline constexpr std::string_view kAnnotationUniqueIdAttempt = "nccl.dev/unique-id-attempt";
inline constexpr std::string_view kAnnotationTrainerContainer = "nccl.dev/trainer-container";

// Kueue (README, "Shared clusters"): a job labelled with a queue is admitted through a Workload.
inline constexpr std::string_view kLabelKueueQueueName = "kueue.x-k8s.io/queue-name";

inline constexpr std::string_view kSidecarContainerName = "nccl-sidecar";
inline constexpr int kSidecarApiPort = 8471;
inline constexpr int kSidecarProbePort = 8472;
inline constexpr int kMasterPort = 29500;
// PaddlePaddle's collective env: each pod's endpoint port, and the largest job that gets the full
// endpoint list (~180 bytes a pod in every container's env; 256 pods stay under 50 KB, while
// 4096 would push a pod past the API server's request size).
inline constexpr int kPaddlePort = 6170;
inline constexpr int kPaddleEndpointsMaxReplicas = 256;

// ConfigMap data keys.
inline constexpr std::string_view kDataAttempt = "attempt";
inline constexpr std::string_view kDataUniqueId = "uniqueId";
inline constexpr std::string_view kDataJobUid = "jobUID";
inline constexpr std::string_view kDataPublishedAt = "publishedAt";

inline std::string ConfigMapName(std::string_view job) { return std::string(job) + "-nccl"; }
inline std::string ServiceAccountName(std::string_view job) { return std::string(job) + "-nccl"; }
inline std::string RoleName(std::string_view job) { return std::string(job) + "-nccl"; }
inline std::string ServiceName(std::string_view job) { return std::string(job); }
inline std::string WorkloadName(std::string_view job) { return "nccljob-" + std::string(job); }
inline std::string PodName(std::string_view job, int index) {
  return std::string(job) + "-" + std::to_string(index);
}

}  // namespace ncclop::api
