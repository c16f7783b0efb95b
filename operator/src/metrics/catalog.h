// Every metric family the operator exports, declared once: its name, type, label names and
// meaning. Render() writes HELP and TYPE from these rows; operator/REFERENCE.md's metric table
// is made from them (CatalogDoc test); the metrics.scrape test holds them against /metrics of a
// running operator (through nccl-operator-metric-catalog, which prints them as JSON); the chart's
// dashboard and alerts may name only these.
//
// Three conventions: ncclop_* are the operator's own; the families named as controller-runtime
// v0.23 names them (controller_runtime_*, workqueue_*, rest_client_requests_total,
// leader_election_master_status: the same names, label names, types and buckets, so dashboards
// and alerts written for controller-runtime operators work unchanged); process_* as every
// Prometheus client library writes them.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace ncclop::metrics {

enum class Type { kCounter, kGauge, kHistogram };
enum class Convention { kOperator, kControllerRuntime, kProcess };

struct Family {
  std::string_view name;
  Type type;
  std::string_view labels;  // label names, comma-separated ("" for none; histograms add le)
  std::string_view help;    // what it means here, one sentence
  Convention convention;
};

// The value of the controller label (controller_runtime_*) and of the name and controller
// labels (workqueue_*): controller-runtime names a controller after its kind, lower case.
inline constexpr std::string_view kControllerName = "nccljob";
// rest_client_requests_total's code when no HTTP answer came (client-go's value).
inline constexpr std::string_view kNoResponseCode = "<error>";

// controller_runtime_reconcile_total's result label: controller-runtime's four values.
namespace result {
inline constexpr std::string_view kSuccess = "success";
inline constexpr std::string_view kError = "error";
inline constexpr std::string_view kRequeue = "requeue";
inline constexpr std::string_view kRequeueAfter = "requeue_after";
}  // namespace result

// ---- the operator's own
inline constexpr Family kReconcileTotal{"ncclop_reconcile_total", Type::kCounter, "",
                                        "Reconciles of NcclJobs, successful or not.", Convention::kOperator};
inline constexpr Family kReconcileErrorsTotal{"ncclop_reconcile_errors_total", Type::kCounter, "",
                                              "Reconciles that ended in an error and were retried.",
                                              Convention::kOperator};
inline constexpr Family kReconcileDuration{"ncclop_reconcile_duration_seconds", Type::kHistogram, "",
                                           "Time one reconcile took, API calls included.", Convention::kOperator};
inline constexpr Family kJobs{"ncclop_jobs", Type::kGauge, "state",
                              "NcclJobs in the cache by status.state, every state with 0 included (Unknown: no "
                              "state yet, not yet seen by the operator).",
                              Convention::kOperator};
inline constexpr Family kAttemptsStarted{"ncclop_attempts_started_total", Type::kCounter, "",
                                         "Attempts started (first attempts, restarts and resumes).",
                                         Convention::kOperator};
inline constexpr Family kRestarts{"ncclop_restarts_total", Type::kCounter, "",
                                  "Attempts that failed and were restarted.", Convention::kOperator};
inline constexpr Family kDisruptions{"ncclop_disruptions_total", Type::kCounter, "",
                                     "Attempts ended by a preemption, eviction or lost node and restarted (not in "
                                     "ncclop_restarts_total).",
                                     Convention::kOperator};
inline constexpr Family kIdsPublished{"ncclop_ids_published_total", Type::kCounter, "",
                                      "Unique ids copied from a root pod into its ConfigMap.", Convention::kOperator};
inline constexpr Family kIdPublishLatency{"ncclop_id_publish_latency_seconds", Type::kHistogram, "",
                                          "From the start of an attempt to its id being in the ConfigMap.",
                                          Convention::kOperator};
inline constexpr Family kEventsDropped{"ncclop_events_dropped_total", Type::kCounter, "",
                                       "Kubernetes Events that could not be written.", Convention::kOperator};
inline constexpr Family kLeader{"ncclop_leader", Type::kGauge, "",
                                "1 while this process holds the leader lease (or runs without election), else 0.",
                                Convention::kOperator};
inline constexpr Family kQueueDepth{"ncclop_workqueue_depth", Type::kGauge, "",
                                    "NcclJobs ready in the reconcile queue, waiting for a worker.",
                                    Convention::kOperator};
inline constexpr Family kQueueAdds{"ncclop_workqueue_adds_total", Type::kCounter, "",
                                   "Adds to the reconcile queue, merged ones included.", Convention::kOperator};
inline constexpr Family kQueueWait{"ncclop_workqueue_queue_duration_seconds", Type::kHistogram, "",
                                   "How long an NcclJob sat ready in the reconcile queue before a worker took it.",
                                   Convention::kOperator};
inline constexpr Family kApiRequests{"ncclop_api_requests_total", Type::kCounter, "verb,code",
                                     "Requests to the Kubernetes API by HTTP verb and status code (each retry "
                                     "counts; code=\"error\": no response; watches not included).",
                                     Convention::kOperator};
inline constexpr Family kApiRequestDuration{"ncclop_api_request_duration_seconds", Type::kHistogram, "verb",
                                            "Time from sending a request to the Kubernetes API to its response, by "
                                            "HTTP verb (each retry counts; watches not included).",
                                            Convention::kOperator};
inline constexpr Family kJobRestarts{"ncclop_job_restarts_total", Type::kCounter, "namespace,nccljob",
                                     "status.restarts of each NcclJob in the cache: attempts that failed and were "
                                     "restarted.",
                                     Convention::kOperator};
inline constexpr Family kJobWaitingForAdmission{
    "ncclop_job_waiting_for_admission_seconds", Type::kGauge, "namespace,nccljob",
    "For each NcclJob waiting in its Kueue queue (condition Admitted False: WaitingForAdmission or "
    "PriorityClassNotFound): seconds since it began to wait; no series for a job that does not wait.",
    Convention::kOperator};
inline constexpr Family kBuildInfo{"ncclop_build_info", Type::kGauge, "version",
                                   "Always 1; the label says which release runs.", Convention::kOperator};

// ---- as controller-runtime v0.23 names them
inline constexpr Family kRuntimeReconcileTotal{
    "controller_runtime_reconcile_total", Type::kCounter, "controller,result",
    "Reconciles by how they ended: success (converged), requeue_after (converged, to look again at a set time: a "
    "backoff, a TTL), requeue (the cache was behind the operator's own writes), error (an API call failed or a "
    "deleted job's object is still going; retried with backoff).",
    Convention::kControllerRuntime};
inline constexpr Family kRuntimeReconcileErrors{"controller_runtime_reconcile_errors_total", Type::kCounter,
                                                "controller", "Reconciles that ended in an error (result=\"error\").",
                                                Convention::kControllerRuntime};
inline constexpr Family kRuntimeReconcileTime{"controller_runtime_reconcile_time_seconds", Type::kHistogram,
                                              "controller", "Time one reconcile took, API calls included.",
                                              Convention::kControllerRuntime};
inline constexpr Family kRuntimeMaxConcurrent{"controller_runtime_max_concurrent_reconciles", Type::kGauge,
                                              "controller", "Reconcile workers (--concurrency).",
                                              Convention::kControllerRuntime};
inline constexpr Family kRuntimeActiveWorkers{"controller_runtime_active_workers", Type::kGauge, "controller",
                                              "Reconcile workers reconciling a job now.",
                                              Convention::kControllerRuntime};
inline constexpr Family kWorkqueueDepth{"workqueue_depth", Type::kGauge, "name,controller",
                                        "Jobs added to the reconcile queue and not yet taken by a worker.",
                                        Convention::kControllerRuntime};
inline constexpr Family kWorkqueueAdds{"workqueue_adds_total", Type::kCounter, "name,controller",
                                       "Adds to the reconcile queue of a job not already waiting in it.",
                                       Convention::kControllerRuntime};
inline constexpr Family kWorkqueueRetries{"workqueue_retries_total", Type::kCounter, "name,controller",
                                          "Jobs put back into the reconcile queue with backoff after an error.",
                                          Convention::kControllerRuntime};
inline constexpr Family kWorkqueueQueueDuration{"workqueue_queue_duration_seconds", Type::kHistogram,
                                                "name,controller",
                                                "From a job's add to the reconcile queue to a worker taking it.",
                                                Convention::kControllerRuntime};
inline constexpr Family kWorkqueueWorkDuration{"workqueue_work_duration_seconds", Type::kHistogram, "name,controller",
                                               "From a worker taking a job to it being done with it.",
                                               Convention::kControllerRuntime};
inline constexpr Family kWorkqueueUnfinished{"workqueue_unfinished_work_seconds", Type::kGauge, "name,controller",
                                             "Seconds the reconciles now running have taken so far, added up; "
                                             "growing without end means a stuck worker.",
                                             Convention::kControllerRuntime};
inline constexpr Family kWorkqueueLongest{"workqueue_longest_running_processor_seconds", Type::kGauge,
                                          "name,controller", "Seconds the longest reconcile now running has taken.",
                                          Convention::kControllerRuntime};
inline constexpr Family kRestClientRequests{"rest_client_requests_total", Type::kCounter, "code,method,host",
                                            "Requests to the Kubernetes API by status code (<error>: no answer), "
                                            "HTTP method and API server host:port (each retry counts; watches not "
                                            "included).",
                                            Convention::kControllerRuntime};
inline constexpr Family kLeaderElectionStatus{"leader_election_master_status", Type::kGauge, "name",
                                              "1 while this process holds the Lease named by name, 0 while it "
                                              "waits for it (only with --leader-elect).",
                                              Convention::kControllerRuntime};

// ---- process_*, as Prometheus client libraries write them
inline constexpr Family kProcessCpu{"process_cpu_seconds_total", Type::kCounter, "",
                                    "Total user and system CPU time spent in seconds.", Convention::kProcess};
inline constexpr Family kProcessResident{"process_resident_memory_bytes", Type::kGauge, "",
                                         "Resident memory size in bytes.", Convention::kProcess};
inline constexpr Family kProcessVirtual{"process_virtual_memory_bytes", Type::kGauge, "",
                                        "Virtual memory size in bytes.", Convention::kProcess};
inline constexpr Family kProcessStart{"process_start_time_seconds", Type::kGauge, "",
                                      "Start time of the process since unix epoch in seconds.", Convention::kProcess};
inline constexpr Family kProcessOpenFds{"process_open_fds", Type::kGauge, "", "Number of open file descriptors.",
                                        Convention::kProcess};
inline constexpr Family kProcessMaxFds{"process_max_fds", Type::kGauge, "",
                                       "Maximum number of open file descriptors.", Convention::kProcess};

inline constexpr std::array kCatalog = {
    kReconcileTotal,        kReconcileErrorsTotal,   kReconcileDuration,    kJobs,
    kAttemptsStarted,       kRestarts,               kDisruptions,          kIdsPublished,
    kIdPublishLatency,      kEventsDropped,          kLeader,               kQueueDepth,
    kQueueAdds,             kQueueWait,              kApiRequests,          kApiRequestDuration,
    kJobRestarts,           kJobWaitingForAdmission, kBuildInfo,            kRuntimeReconcileTotal,  kRuntimeReconcileErrors, kRuntimeReconcileTime,
    kRuntimeMaxConcurrent,  kRuntimeActiveWorkers,   kWorkqueueDepth,       kWorkqueueAdds,
    kWorkqueueRetries,      kWorkqueueQueueDuration, kWorkqueueWorkDuration, kWorkqueueUnfinished,
    kWorkqueueLongest,      kRestClientRequests,     kLeaderElectionStatus, kProcessCpu,
    kProcessResident,       kProcessVirtual,         kProcessStart,         kProcessOpenFds,
    kProcessMaxFds,
};

std::string_view TypeName(Type type);            // "counter", "gauge", "histogram"
std::string_view ConventionName(Convention c);  // "nccl-operator", "controller-runtime", "process"
// The "# HELP" and "# TYPE" lines of a family.
std::string Header(const Family& family);
// operator/REFERENCE.md's metric table (a Markdown table, one row per family, in catalog order).
std::string MarkdownTable();
// The catalog as a JSON array of {name, type, labels[], convention}, for the tests that hold
// /metrics, the dashboard and the alerts to it.
std::string CatalogJson();

}  // namespace ncclop::metrics
