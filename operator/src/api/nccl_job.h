// The NcclJob resource as the operator sees it: spec with its defaults applied, and status.
// Parsing never throws: a document the operator cannot use gives a Status whose message
// names the field and says what to change (the CRD schema rejects most such input first;
// this covers what slips past it, e.g. an old CRD or a direct etcd write).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/kueue_topology.h"
#include "api/spec_fields.h"
#include "api/time.h"
#include "kube/status.h"

namespace ncclop::api {

using Json = nlohmann::json;

// Defaults are the CRD's, from api/spec_fields.h.
// failurePolicy.restartStrategy: how the next attempt gets its pods.
enum class RestartStrategy {
  kAuto,      // "Auto" (default): in place where every node declares the kubelet's feature, else Recreate
  kInPlace,   // "InPlace": each pod's containers are restarted by its kubelet (restartPolicyRules)
  kRecreate,  // "Recreate": every pod is deleted and made again
};

struct FailurePolicy {
  int max_restarts = spec_fields::Int32Default(spec_fields::kMaxRestarts);
  int backoff_seconds = spec_fields::Int32Default(spec_fields::kBackoffSeconds);
  int max_backoff_seconds = spec_fields::Int32Default(spec_fields::kMaxBackoffSeconds);
  std::vector<int> fail_fast_exit_codes;
  RestartStrategy restart_strategy = RestartStrategy::kAuto;  // spec_fields::kRestartStrategy's default
  std::optional<int> max_disruptions;  // unset: disruptions never fail the job
  // How long pod creates refused as Forbidden (a ResourceQuota, Pod Security, a missing
  // ServiceAccount) are retried before the job fails (PodCreateForbidden).
  int forbidden_retry_seconds = spec_fields::Int32Default(spec_fields::kForbiddenRetrySeconds);
  // A rank that reported progress and then went silent this long ends the attempt as Stalled
  // (its sidecar watches it, contract::kSidecarStallTimeoutFlag); unset: no stall watch.
  std::optional<int> stall_timeout_seconds;
};

// spec.gangScheduling: whether the job's pods form one gang of Kubernetes' native gang
// scheduling (a scheduling.k8s.io Workload and PodGroups, desired/gang_workload.h).
enum class GangScheduling {
  kAuto,      // "Auto" (default): where the API server serves a scheduling.k8s.io gang API
  kRequired,  // "Required": always; the job fails where that API is not served
  kDisabled,  // "Disabled": never; pods are scheduled one by one
};

// spec.computeDomain: the job's own NVIDIA ComputeDomain (resource.nvidia.com/v1beta1), whose IMEX
// channel every pod claims, for NCCL over multi-node NVLink (GB200/GB300 NVL72;
// desired/compute_domain.h).
struct ComputeDomainRequest {
  bool requested = false;  // the spec names computeDomain
  int num_nodes = spec_fields::Int32Default(spec_fields::kComputeDomainNumNodes);
  std::string allocation_mode = std::string(spec_fields::kComputeDomainAllocationMode.default_value.value());
};

struct NcclJobSpec {
  int replicas = spec_fields::Int32Default(spec_fields::kReplicas);
  int gpus_per_pod = spec_fields::Int32Default(spec_fields::kGpusPerPod);
  int init_timeout_seconds = spec_fields::Int32Default(spec_fields::kInitTimeoutSeconds);
  bool suspend = spec_fields::kSuspend.default_value;
  std::optional<std::int64_t> ttl_seconds_after_finished;
  // The job fails (DeadlineExceeded) this long after status.startTime; unset: no deadline.
  std::optional<std::int64_t> active_deadline_seconds;
  std::string socket_ifname;  // "" = let the runtime choose
  std::optional<int> sidecar_port;  // network.sidecarPort; unset: desired/sidecar_ports.h chooses
  // network.bootstrapRoots: pods that each make an id (ncclCommInitRankScalable); 1..replicas.
  // The CRD gives it no default: unset is one root (pod 0) without NCCLJOB_BOOTSTRAP_ROOTS;
  // bootstrap_roots_set: the spec names it, so NCCLJOB_BOOTSTRAP_ROOTS is injected (also for 1).
  int bootstrap_roots = 1;
  bool bootstrap_roots_set = false;
  FailurePolicy failure_policy;
  GangScheduling gang_scheduling = GangScheduling::kAuto;  // spec_fields::kGangScheduling's default
  // The sizeLimit of the trainer's memory-backed /dev/shm, a quantity; zero: none (desired/pod_shape.h).
  std::string shm_size = std::string(spec_fields::kShmSize.default_value);
  ComputeDomainRequest compute_domain;
  // spec.gangTopologyKey: a node label; every pod of an attempt in one domain of it (the gang's
  // PodGroup topology constraint, desired/gang_workload.h). "": none.
  std::string gang_topology_key;
  Json pod_template;              // a PodTemplateSpec (metadata + spec)
  std::string trainer_container;  // resolved: the annotated one or the first container
  // Kueue's Topology Aware Scheduling request: the template's kueue.x-k8s.io/podset-* annotations.
  KueueTopologyRequest kueue_topology;

  // NCCL ranks in the job: replicas * max(gpusPerPod, 1).
  int WorldSize() const { return replicas * LocalWorldSize(); }
  int LocalWorldSize() const { return gpus_per_pod > 0 ? gpus_per_pod : 1; }
};

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;
  std::int64_t observed_generation = 0;
  bool operator==(const Condition&) const = default;
};

// Condition types (DESIGN.md) and the one-word states of status.state.
namespace condition {
inline constexpr const char* kCreated = "Created";
inline constexpr const char* kRunning = "Running";
inline constexpr const char* kRestarting = "Restarting";
inline constexpr const char* kIdPublished = "IdPublished";
inline constexpr const char* kSuspended = "Suspended";
inline constexpr const char* kSucceeded = "Succeeded";
inline constexpr const char* kFailed = "Failed";
inline constexpr const char* kAdmitted = "Admitted";  // only for jobs in a Kueue queue
}  // namespace condition

// The Admitted condition's reasons while a job waits in its Kueue queue.
namespace reason {
inline constexpr const char* kWaitingForAdmission = "WaitingForAdmission";
inline constexpr const char* kPriorityClassNotFound = "PriorityClassNotFound";
}  // namespace reason

namespace state {
inline constexpr const char* kPending = "Pending";
inline constexpr const char* kRunning = "Running";
inline constexpr const char* kRestarting = "Restarting";
inline constexpr const char* kSucceeded = "Succeeded";
inline constexpr const char* kFailed = "Failed";
inline constexpr const char* kSuspended = "Suspended";
}  // namespace state

// status.progress: the newest progress report of the job's pod 0 (its sidecar puts it on the pod
// as contract::kAnnotationProgress; observed/progress.h reads it).
struct Progress {
  int attempt = 0;
  std::int64_t step = 0;
  std::optional<std::int64_t> total_steps;
  std::string time;  // RFC 3339: when the sidecar received the report
  std::vector<std::pair<std::string, std::string>> metrics;  // name, value as the report wrote it
  bool operator==(const Progress&) const = default;
};

struct NcclJobStatus {
  std::int64_t observed_generation = 0;
  std::string state;
  int attempt = 0;  // 0: no attempt started yet
  int restarts = 0;
  int disruptions = 0;  // attempts ended by a preemption, eviction or lost node (not in restarts)
  int ready = 0;
  int active = 0;
  int succeeded = 0;
  int failed = 0;
  std::string start_time;
  std::string attempt_start_time;
  std::string restart_after;
  std::string completion_time;
  std::string id_published_time;
  // How the current attempt's pods restart when it fails: "InPlace" or "Recreate" ("" before the
  // first attempt's pods).
  std::string restart_strategy;
  // The revision of the pod shape the job's pods are made in (desired/pod_shape.h, PodShapeOf);
  // 0: not recorded yet.
  int pod_shape = 0;
  std::optional<Progress> progress;
  std::vector<Condition> conditions;

  const Condition* Find(const std::string& type) const;
  bool IsTrue(const std::string& type) const;
  bool Finished() const { return IsTrue(condition::kSucceeded) || IsTrue(condition::kFailed); }
  bool operator==(const NcclJobStatus&) const = default;
};

struct NcclJob {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::int64_t generation = 0;
  std::string resource_version;
  bool being_deleted = false;
  // Set when the spec cannot be used; the job is then marked Failed (reason InvalidSpec)
  // instead of being dropped, so the user sees why.
  std::string spec_error;
  // The trainer-container annotation set on the NcclJob itself, where it has no effect (it
  // belongs on spec.template.metadata): the value, for a warning.
  std::string misplaced_trainer_annotation;
  // Label kueue.x-k8s.io/queue-name: the job waits for Kueue to admit its Workload.
  std::string queue_name;
  // Label kueue.x-k8s.io/priority-class: the WorkloadPriorityClass of that Workload.
  std::string workload_priority_class;
  NcclJobSpec spec;
  NcclJobStatus status;
};

// status.progress: its JSON (with "percent" and "summary", the printer column, derived) and back.
Json ProgressToJson(const Progress& progress);
std::optional<Progress> ParseProgressStatus(const Json& progress);
std::string ProgressSummary(const Progress& progress);  // "1234/10000 (12%)", or "1234" without a total
int ProgressPercent(const Progress& progress);           // 0..100; 0 without a total

// Whether an object's metadata says it is being deleted (deletionTimestamp set).
bool BeingDeleted(const Json& metadata);

// The whole object; an error only when metadata is unusable (no name/namespace/uid). The
// spec is parsed strictly (errors land in spec_error), the status leniently (we wrote it).
kube::Result<NcclJob> ParseNcclJob(const Json& object);
kube::Result<NcclJobSpec> ParseSpec(const Json& spec);
NcclJobStatus ParseStatus(const Json& status);
Json StatusToJson(const NcclJobStatus& status);

}  // namespace ncclop::api
