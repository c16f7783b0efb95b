// The env the operator injects into every container of a job's pods (docs/contracts.md, "Env
// injected"), and the knobs a user sets for the runtime. Header-only.
#pragma once

namespace contract::env {

inline constexpr char kJobName[] = "NCCLJOB_NAME";
inline constexpr char kNamespace[] = "NCCLJOB_NAMESPACE";
inline constexpr char kJobUid[] = "NCCLJOB_UID";
inline constexpr char kIndex[] = "NCCLJOB_INDEX";
inline constexpr char kReplicas[] = "NCCLJOB_REPLICAS";
inline constexpr char kGpusPerPod[] = "NCCLJOB_GPUS_PER_POD";
inline constexpr char kWorldSize[] = "NCCLJOB_WORLD_SIZE";
inline constexpr char kAttempt[] = "NCCLJOB_ATTEMPT";
inline constexpr char kSidecarUrl[] = "NCCLJOB_SIDECAR_URL";
inline constexpr char kPodIp[] = "NCCLJOB_POD_IP";
inline constexpr char kPodName[] = "NCCLJOB_POD_NAME";
inline constexpr char kInitTimeoutSeconds[] = "NCCLJOB_INIT_TIMEOUT_SECONDS";
// Only when spec.network.bootstrapRoots is set: pods that each make an id (bootstrap_roots.h).
inline constexpr char kBootstrapRoots[] = "NCCLJOB_BOOTSTRAP_ROOTS";

// What the sidecar container reads and cannot learn otherwise: of the pod's own variables it gets
// only these (the trainer and the user's init containers get all of the above); the job's come by
// the job's envFrom, as to every container (docs/contracts.md). Its namespace is its service account's
// (the mounted token's), its pod name <job>-<index>, its world size REPLICAS x GPUS_PER_POD.
// Every pod carries its env to every watcher of pods (bench/scale/podcost.py measures it).
inline constexpr const char* kSidecarEnv[] = {kJobName, kJobUid,  kIndex,         kReplicas,
                                              kGpusPerPod, kAttempt, kBootstrapRoots};
// Read by the sidecar when set (the job's envFrom gives the namespace and world size, pods of an
// earlier operator gave all three); otherwise learnt as above.
inline constexpr const char* kSidecarEnvOfEarlierPods[] = {kNamespace, kPodName, kWorldSize};

// Injected too, for programs written for other launchers.
inline constexpr char kNcclSocketIfname[] = "NCCL_SOCKET_IFNAME";  // only when the spec sets it
inline constexpr char kMasterAddr[] = "MASTER_ADDR";
inline constexpr char kMasterPort[] = "MASTER_PORT";
inline constexpr char kTorchWorldSize[] = "WORLD_SIZE";
inline constexpr char kTorchRank[] = "RANK";
inline constexpr char kNodeRank[] = "NODE_RANK";
inline constexpr char kNnodes[] = "NNODES";
inline constexpr char kLocalWorldSize[] = "LOCAL_WORLD_SIZE";
inline constexpr char kPaddleTrainerId[] = "PADDLE_TRAINER_ID";
inline constexpr char kPaddleTrainersNum[] = "PADDLE_TRAINERS_NUM";
inline constexpr char kPaddleCurrentEndpoint[] = "PADDLE_CURRENT_ENDPOINT";
inline constexpr char kPaddleTrainerEndpoints[] = "PADDLE_TRAINER_ENDPOINTS";  // up to kPaddleEndpointsMaxReplicas pods

// Set by torchrun in each worker it starts, never injected: a progress report's rank is the
// pod's first rank plus this (docs/contracts.md, "Progress").
inline constexpr char kTorchLocalRank[] = "LOCAL_RANK";

// Set by the user, never injected: read by the runtime only.
inline constexpr char kCommMode[] = "NCCL_K8S_COMM_MODE";
inline constexpr char kLogLevel[] = "NCCL_K8S_LOG_LEVEL";

}  // namespace contract::env
