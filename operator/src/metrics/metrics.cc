#include "metrics/metrics.h"

#include <cstdio>

#include "api/nccl_job.h"
#include "contract/release_version.h"
#include "metrics/process.h"

namespace ncclop::metrics {
namespace {

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void Header(std::string* out, const char* name, const char* type, const char* help) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void Counter(std::string* out, const char* name, const char* help, std::uint64_t value) {
  Header(out, name, "counter", help);
  *out += std::string(name) + " " + std::to_string(value) + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Render(const std::string& name, std::string* out, const std::string& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string bucket = name + "_bucket{" + labels + (labels.empty() ? "" : ",") + "le=\"";
  const std::string braced = labels.empty() ? "" : "{" + labels + "}";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    *out += bucket + Number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  cumulative += counts_.back();
  *out += bucket + "+Inf\"} " + std::to_string(cumulative) + "\n";
  *out += name + "_sum" + braced + " " + Number(sum_) + "\n";
  *out += name + "_count" + braced + " " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : reconcile_duration_({0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}),
      id_publish_latency_({0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}),
      workqueue_wait_({0.0001, 0.001, 0.01, 0.1, 1, 10, 60}) {}

void Metrics::ApiResponse(std::string_view method, int code, double seconds) {
  std::lock_guard<std::mutex> lock(api_mu_);
  ++api_responses_[{std::string(method), code > 0 ? std::to_string(code) : std::string("error")}];
  auto& latency = api_latency_[std::string(method)];
  if (!latency) {
    latency = std::make_unique<Histogram>(
        std::vector<double>{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60});
  }
  latency->Observe(seconds);
}

void Metrics::ReconcileDone(double seconds, bool ok) {
  reconciles_.fetch_add(1, std::memory_order_relaxed);
  if (!ok) reconcile_errors_.fetch_add(1, std::memory_order_relaxed);
  reconcile_duration_.Observe(seconds);
}

void Metrics::IdPublished(double latency_seconds) {
  ids_published_.fetch_add(1, std::memory_order_relaxed);
  id_publish_latency_.Observe(latency_seconds);
}

std::string Metrics::Render(const std::map<std::string, int>& jobs_by_state, bool leader,
                            std::size_t queue_depth) const {
  std::string out;
  Counter(&out, "ncclop_reconcile_total", "Reconciles of NcclJobs, successful or not.", reconciles_.load());
  Counter(&out, "ncclop_reconcile_errors_total", "Reconciles that ended in an error and were retried.",
          reconcile_errors_.load());
  Header(&out, "ncclop_reconcile_duration_seconds", "histogram", "Time one reconcile took, API calls included.");
  reconcile_duration_.Render("ncclop_reconcile_duration_seconds", &out);
  Header(&out, "ncclop_jobs", "gauge", "NcclJobs in the cache by status.state (Unknown: no state yet, not yet seen by the operator).");
  for (const auto& [state, n] : JobsByStateLabel(jobs_by_state)) {
    out += "ncclop_jobs{state=\"" + state + "\"} " + std::to_string(n) + "\n";
  }
  Counter(&out, "ncclop_attempts_started_total", "Attempts started (first attempts, restarts and resumes).",
          attempts_started_.load());
  Counter(&out, "ncclop_restarts_total", "Attempts that failed and were restarted.", restarts_.load());
  Counter(&out, "ncclop_disruptions_total",
          "Attempts ended by a preemption, eviction or lost node and restarted (not in restarts).", disruptions_.load());
  Counter(&out, "ncclop_ids_published_total", "Unique ids copied from a root pod into its ConfigMap.",
          ids_published_.load());
  Header(&out, "ncclop_id_publish_latency_seconds", "histogram",
         "From the start of an attempt to its id being in the ConfigMap.");
  id_publish_latency_.Render("ncclop_id_publish_latency_seconds", &out);
  Counter(&out, "ncclop_events_dropped_total", "Kubernetes Events that could not be written.", events_dropped_.load());
  Header(&out, "ncclop_leader", "gauge", "1 while this process holds the leader lease (or runs without election).");
  out += std::string("ncclop_leader ") + (leader ? "1" : "0") + "\n";
  Header(&out, "ncclop_workqueue_depth", "gauge", "NcclJobs waiting in the reconcile queue.");
  out += "ncclop_workqueue_depth " + std::to_string(queue_depth) + "\n";
  Counter(&out, "ncclop_workqueue_adds_total", "Adds to the reconcile queue (merged ones included).",
          workqueue_adds_.load());
  Header(&out, "ncclop_workqueue_queue_duration_seconds", "histogram",
         "How long an NcclJob waited in the reconcile queue before a worker took it.");
  workqueue_wait_.Render("ncclop_workqueue_queue_duration_seconds", &out);
  Header(&out, "ncclop_api_requests_total", "counter",
         "Requests to the Kubernetes API by HTTP verb and status code (each retry counts; code=\"error\": no "
         "response; watches not included).");
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    for (const auto& [key, n] : api_responses_) {
      out += "ncclop_api_requests_total{verb=\"" + key.first + "\",code=\"" + key.second + "\"} " + std::to_string(n) + "\n";
    }
  }
  Header(&out, "ncclop_api_request_duration_seconds", "histogram",
         "Time from sending a request to the Kubernetes API to its response, by HTTP verb (each retry "
         "counts; watches not included).");
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    for (const auto& [verb, histogram] : api_latency_) {
      histogram->Render("ncclop_api_request_duration_seconds", &out, "verb=\"" + verb + "\"");
    }
  }
  Header(&out, "ncclop_build_info", "gauge", "Always 1; the labels say which build runs.");
  out += "ncclop_build_info{version=\"" + std::string(contract::kReleaseVersion) + "\"} 1\n";
  if (auto process = ReadProcessStats()) RenderProcessStats(*process, &out);
  return out;
}

std::map<std::string, int> JobsByStateLabel(const std::map<std::string, int>& jobs_by_state) {
  std::map<std::string, int> out;
  for (const char* state : {api::state::kPending, api::state::kRunning, api::state::kRestarting, api::state::kSucceeded,
                            api::state::kFailed, api::state::kSuspended, kUnknownState}) {
    out[state] = 0;
  }
  for (const auto& [state, n] : jobs_by_state) out[out.count(state) && !state.empty() ? state : kUnknownState] += n;
  return out;
}

}  // namespace ncclop::metrics
