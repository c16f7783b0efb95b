// The names the operator, the sidecar and the runtime share (docs/contracts.md is their prose).
// Declared once here, so a renamed key is a compile error in every part. Header-only, the
// standard library only: a training image builds the runtime with nothing else.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace contract {

// The NcclJob API.
inline constexpr std::string_view kGroup = "nccl.dev";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "nccl.dev/v1alpha1";
inline constexpr std::string_view kKind = "NcclJob";

// Labels (every object the operator makes, pods) and the annotations of the root pod.
inline constexpr std::string_view kLabelJobName = "nccl.dev/job-name";
inline constexpr std::string_view kLabelIndex = "nccl.dev/index";
inline constexpr std::string_view kLabelAttempt = "nccl.dev/attempt";
inline constexpr std::string_view kAnnotationUniqueId = "nccl.dev/unique-id";
inline constexpr std::string_view kAnnotationUniqueIdAttempt = "nccl.dev/unique-id-attempt";
// On a pod restarted in place for an attempt (failurePolicy.restartStrategy InPlace), set by the
// operator with the attempt label: the trainer container's restart count the attempt starts
// from. A restart beyond it is a failure of that attempt (observed/pod.h).
inline constexpr std::string_view kAnnotationRestartsBefore = "nccl.dev/restarts-before-attempt";
// On spec.template.metadata: which container is the trainer (default: the first).
inline constexpr std::string_view kAnnotationTrainerContainer = "nccl.dev/trainer-container";

// Kueue (docs/shared-clusters.md): a job labelled with a queue is admitted through a Workload.
inline constexpr std::string_view kLabelKueueQueueName = "kueue.x-k8s.io/queue-name";
// The WorkloadPriorityClass that gives the job's Workload its priority (desired/kueue_workload_priority.h).
inline constexpr std::string_view kLabelKueuePriorityClass = "kueue.x-k8s.io/priority-class";
// On a Kueue Workload the operator deactivated because its job is suspended (policy/admission.h).
inline constexpr std::string_view kAnnotationSuspended = "nccl.dev/suspended";
// Kueue's Topology Aware Scheduling (Kueue v0.17, apis/kueue/v1beta2/topology_types.go), as a
// Kueue user writes it on spec.template.metadata.annotations (api/kueue_topology.h): where the
// job's pods must (required) or should (preferred) share one topology domain, or may go anywhere
// (unconstrained); slices of podset-slice-size consecutive pods that must each share a domain.
inline constexpr std::string_view kAnnotationKueueRequiredTopology = "kueue.x-k8s.io/podset-required-topology";
inline constexpr std::string_view kAnnotationKueuePreferredTopology = "kueue.x-k8s.io/podset-preferred-topology";
inline constexpr std::string_view kAnnotationKueueUnconstrainedTopology = "kueue.x-k8s.io/podset-unconstrained-topology";
inline constexpr std::string_view kAnnotationKueueSliceRequiredTopology = "kueue.x-k8s.io/podset-slice-required-topology";
inline constexpr std::string_view kAnnotationKueueSliceSize = "kueue.x-k8s.io/podset-slice-size";
// Kueue's alpha TASMultiLayerTopology: up to 3 slice layers as JSON [{"topology","size"}].
inline constexpr std::string_view kAnnotationKueueSliceTopologyConstraints =
    "kueue.x-k8s.io/podset-slice-required-topology-constraints";
// Groups two pod sets; an NcclJob has one, so the operator refuses it.
inline constexpr std::string_view kAnnotationKueuePodSetGroupName = "kueue.x-k8s.io/podset-group-name";
// What Kueue's TopologyUngater needs on the pods of a Workload admitted with a topology
// assignment (desired/kueue_topology.h): the gate it removes, writing each pod's domain into its
// nodeSelector by the pod's index label (contract::kLabelIndex, the pod set's podIndexLabel);
// the annotation and the label it finds the pods by.
inline constexpr std::string_view kKueueTopologySchedulingGate = "kueue.x-k8s.io/topology";
inline constexpr std::string_view kAnnotationKueueWorkload = "kueue.x-k8s.io/workload";
inline constexpr std::string_view kLabelKueuePodSet = "kueue.x-k8s.io/podset";

// The ConfigMap <job>-nccl: its data keys.
inline constexpr std::string_view kDataAttempt = "attempt";
inline constexpr std::string_view kDataUniqueId = "uniqueId";
inline constexpr std::string_view kDataJobUid = "jobUID";
inline constexpr std::string_view kDataPublishedAt = "publishedAt";

// The sidecar: its container, ports and HTTP paths.
inline constexpr std::string_view kSidecarContainerName = "nccl-sidecar";
inline constexpr int kSidecarApiPort = 8471;    // the id API, on 127.0.0.1
inline constexpr int kSidecarProbePort = 8472;  // /healthz, /readyz
inline constexpr std::string_view kPathId = "/v1/id";
inline constexpr std::string_view kPathInfo = "/v1/info";
// Standalone root sidecars of a job of several bootstrap roots: their own trainer's id.
inline constexpr std::string_view kPathRootId = "/v1/root-id";
inline constexpr std::string_view kPathHealthz = "/healthz";
// In place (failurePolicy.restartStrategy InPlace): the sidecar keeps the last attempt its pod
// served in this emptyDir (it outlives a restart of the pod's containers), and exits with
// kSidecarExitAttemptOver when the ConfigMap names a later attempt; the pod's restart rule then
// restarts every container of the pod (RestartAllContainers) for that attempt.
inline constexpr std::string_view kSidecarStateVolume = "nccl-sidecar-state";
inline constexpr std::string_view kSidecarStateDir = "/var/run/nccl-sidecar";
inline constexpr std::string_view kSidecarStateFlag = "--in-place-state";
inline constexpr int kSidecarExitAttemptOver = 85;
// The kubelet feature a node declares (Node status.declaredFeatures) when it restarts a pod's
// containers in place on a restartPolicyRules action RestartAllContainers.
inline constexpr std::string_view kNodeFeatureRestartAllContainers = "RestartAllContainersOnContainerExits";
inline constexpr std::string_view kPathReadyz = "/readyz";
// Progress and stalls (docs/contracts.md "Progress"). A trainer's rank reports with one UDP
// datagram to its sidecar on 127.0.0.1, at the port of NCCLJOB_SIDECAR_URL (the API port): a JSON
// object {"rank", "step", "total"?, "metrics"?: {name: number}, "done"?: true} of at most
// kProgressReportMaxBytes, never waited for (a lost report is fine). "done" says the rank has
// stopped stepping on purpose: it is no longer watched for a stall.
inline constexpr char kFieldRank[] = "rank";
inline constexpr char kFieldStep[] = "step";
inline constexpr char kFieldTotal[] = "total";
inline constexpr char kFieldMetrics[] = "metrics";
inline constexpr char kFieldDone[] = "done";
inline constexpr char kFieldTime[] = "time";
inline constexpr std::size_t kProgressReportMaxBytes = 1024;
inline constexpr int kProgressMaxMetrics = 8;
inline constexpr std::size_t kProgressMetricNameMax = 32;
// GET: the sidecar's last report of each of its ranks, {"ranks": [{"rank","step","total",
// "metrics","time","done"}]}, for people and tests.
inline constexpr std::string_view kPathProgress = "/v1/progress";
// Pod 0's sidecar puts the newest report of its ranks on its own pod, at most once every
// kProgressAnnotationSeconds and only when it changed: {"attempt","step","total"?,"metrics"?,
// "time"} (time: RFC 3339, when the sidecar received it). The operator copies it into
// status.progress. A steady state costs one pod write and one job status write per interval per
// job, whatever the number of pods or the rate of reports.
inline constexpr std::string_view kAnnotationProgress = "nccl.dev/progress";
inline constexpr int kProgressAnnotationSeconds = 5;
// failurePolicy.stallTimeoutSeconds reaches every sidecar as this flag (absent: no stall
// watch). A rank that reported once and then sent nothing for that long while the pod serves
// its attempt is stalled: the sidecar writes why to its termination message (the kubelet puts it
// in the pod's status) and exits with kSidecarExitStalled; the operator ends the attempt as
// Stalled. One write per stall, none in a steady state.
inline constexpr std::string_view kSidecarStallTimeoutFlag = "--stall-timeout-seconds";
inline constexpr int kSidecarExitStalled = 86;
// The JSON fields of /v1/id: the root's POST body {"id","attempt"} and the long-poll's answer
// {"ids","id","attempt","job","jobUID"} ("ids": one per bootstrap root; "id" only when there is
// one), which non-root sidecars and the runtime read.
inline constexpr char kFieldId[] = "id";
inline constexpr char kFieldIds[] = "ids";
inline constexpr char kFieldAttempt[] = "attempt";
inline constexpr char kFieldJob[] = "job";
inline constexpr char kFieldJobUid[] = "jobUID";
// PyTorch-style rendezvous port in MASTER_PORT.
inline constexpr int kMasterPort = 29500;
// PaddlePaddle's collective env: each pod's endpoint port, and the largest job that gets the full
// endpoint list (~40 bytes a pod in every process's environment: 256 pods stay near 10 KB, while
// 4096 would pass the 128 KiB Linux allows one variable, and no program of the pod would start).
inline constexpr int kPaddlePort = 6170;
inline constexpr int kPaddleEndpointsMaxReplicas = 256;

// Objects of a job: names derived from the job's name alone, so a restarted operator and
// every sidecar find them again.
inline std::string ConfigMapName(std::string_view job) { return std::string(job) + "-nccl"; }
// The values of the env contract that are the same in every pod of one job (name, namespace, UID
// and what follows from replicas and gpusPerPod, both immutable): an immutable ConfigMap the
// pods' containers read by envFrom, so they are carried once per job instead of in every pod. Its
// name ends in a hash of its data (the operator's desired/env_configmap.h), which holds the job's
// UID: a kubelet keeps an immutable ConfigMap it has read for as long as a pod on its node refers
// to it, so another job of the same name, or other data for this one (a later release), must
// never find the name taken.
inline std::string EnvConfigMapName(std::string_view job, std::string_view data_hash) {
  return std::string(job) + "-nccl-env-" + std::string(data_hash);
}
inline std::string ServiceAccountName(std::string_view job) { return std::string(job) + "-nccl"; }
inline std::string RoleName(std::string_view job) { return std::string(job) + "-nccl"; }
inline std::string ServiceName(std::string_view job) { return std::string(job); }
inline std::string KueueWorkloadName(std::string_view job) { return "nccljob-" + std::string(job); }
// Native gang scheduling (desired/gang_workload.h): the scheduling.k8s.io Workload has the job's name and
// one pod group (v1alpha1) or pod group template (v1alpha2, v1beta1) named "trainers". Each attempt's
// pods are one replica of that group (v1alpha1: the replica key) or one PodGroup of their own.
inline std::string GangWorkloadName(std::string_view job) { return std::string(job); }
inline constexpr std::string_view kGangPodGroup = "trainers";
inline std::string GangReplicaKey(int attempt) { return "attempt-" + std::to_string(attempt); }
inline std::string GangPodGroupName(std::string_view job, int attempt) {
  return std::string(job) + "-" + GangReplicaKey(attempt);
}
inline std::string PodName(std::string_view job, int index) {
  return std::string(job) + "-" + std::to_string(index);
}
// The trainer's memory-backed /dev/shm (spec.shmSize; the operator's desired/pod_shape.h).
inline constexpr std::string_view kShmVolume = "nccl-shm";
inline constexpr std::string_view kShmPath = "/dev/shm";
// spec.computeDomain: the job's NVIDIA ComputeDomain (resource.nvidia.com) has the job's name; the
// DRA driver makes the ResourceClaimTemplate of its IMEX channel under the name the ComputeDomain
// gives it, and every pod claims it (pod resourceClaims, trainer resources.claims) by kComputeDomainClaim.
inline std::string ComputeDomainName(std::string_view job) { return std::string(job); }
inline std::string ComputeDomainChannelName(std::string_view job) { return std::string(job) + "-imex-channel"; }
inline constexpr std::string_view kComputeDomainClaim = "compute-domain-channel";
// NCCLJOB_SIDECAR_URL: the id API on loopback (a hostNetwork job's port is its own, see the
// operator's desired/sidecar_ports.h).
inline std::string SidecarUrl(int api_port = kSidecarApiPort) { return "http://127.0.0.1:" + std::to_string(api_port); }

}  // namespace contract
