#include "metrics/metrics.h"

#include <cstdio>

#include "api/nccl_job.h"
#include "contract/release_version.h"
#include "metrics/catalog.h"
#include "metrics/process.h"

namespace ncclop::metrics {
namespace {

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void Counter(std::string* out, const Family& family, std::uint64_t value, const std::string& labels = "") {
  *out += Header(family) + std::string(family.name) + labels + " " + std::to_string(value) + "\n";
}

void Gauge(std::string* out, const Family& family, const std::string& value, const std::string& labels = "") {
  *out += Header(family) + std::string(family.name) + labels + " " + value + "\n";
}

// controller-runtime's reconcile time buckets (pkg/internal/controller/metrics, v0.23).
std::vector<double> ReconcileTimeBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
          0.7,   0.8,  0.9,   1.0,  1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5,
          6,     7,    8,     9,    10,  15,  20,   25,  30,  40,  50,  60};
}

// client-go's workqueue buckets as controller-runtime registers them: 10 ns to 1000 s, x10.
std::vector<double> WorkqueueBuckets() {
  std::vector<double> out;
  double bound = 1e-8;
  for (int i = 0; i < 12; ++i, bound *= 10) out.push_back(bound);
  return out;
}

std::string Quoted(std::string_view label, std::string_view value) {
  return std::string(label) + "=\"" + std::string(value) + "\"";
}

std::string_view EndLabel(std::size_t end) {
  switch (static_cast<ReconcileEnd>(end)) {
    case ReconcileEnd::kSuccess:
      return result::kSuccess;
    case ReconcileEnd::kRequeueAfter:
      return result::kRequeueAfter;
    case ReconcileEnd::kRequeue:
      return result::kRequeue;
    case ReconcileEnd::kError:
      return result::kError;
  }
  return result::kError;
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
      workqueue_wait_({0.0001, 0.001, 0.01, 0.1, 1, 10, 60}),
      reconcile_time_(ReconcileTimeBuckets()),
      queue_taken_(WorkqueueBuckets()),
      queue_work_(WorkqueueBuckets()) {}

void Metrics::ApiResponse(std::string_view method, int code, double seconds, std::string_view host) {
  std::lock_guard<std::mutex> lock(api_mu_);
  ++api_responses_[{std::string(method), code > 0 ? std::to_string(code) : std::string("error")}];
  ++rest_requests_[{code > 0 ? std::to_string(code) : std::string(kNoResponseCode), std::string(method),
                    host.empty() ? std::string("none") : std::string(host)}];
  auto& latency = api_latency_[std::string(method)];
  if (!latency) {
    latency = std::make_unique<Histogram>(
        std::vector<double>{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60});
  }
  latency->Observe(seconds);
}

void Metrics::ReconcileDone(double seconds, ReconcileEnd end) {
  reconciles_.fetch_add(1, std::memory_order_relaxed);
  if (end == ReconcileEnd::kError) reconcile_errors_.fetch_add(1, std::memory_order_relaxed);
  reconciles_by_end_[static_cast<std::size_t>(end)].fetch_add(1, std::memory_order_relaxed);
  active_workers_.fetch_sub(1, std::memory_order_relaxed);
  reconcile_duration_.Observe(seconds);
  reconcile_time_.Observe(seconds);
}

void Metrics::IdPublished(double latency_seconds) {
  ids_published_.fetch_add(1, std::memory_order_relaxed);
  id_publish_latency_.Observe(latency_seconds);
}

std::string Metrics::Render(const Scrape& now) const {
  std::string out;
  Counter(&out, kReconcileTotal, reconciles_.load());
  Counter(&out, kReconcileErrorsTotal, reconcile_errors_.load());
  out += Header(kReconcileDuration);
  reconcile_duration_.Render(std::string(kReconcileDuration.name), &out);
  out += Header(kJobs);
  for (const auto& [state, n] : JobsByStateLabel(now.jobs_by_state)) {
    out += std::string(kJobs.name) + "{" + Quoted("state", state) + "} " + std::to_string(n) + "\n";
  }
  Counter(&out, kAttemptsStarted, attempts_started_.load());
  Counter(&out, kRestarts, restarts_.load());
  Counter(&out, kDisruptions, disruptions_.load());
  Counter(&out, kIdsPublished, ids_published_.load());
  out += Header(kIdPublishLatency);
  id_publish_latency_.Render(std::string(kIdPublishLatency.name), &out);
  Counter(&out, kEventsDropped, events_dropped_.load());
  Gauge(&out, kLeader, now.leader ? "1" : "0");
  Gauge(&out, kQueueDepth, std::to_string(now.queue_ready));
  Counter(&out, kQueueAdds, workqueue_adds_.load());
  out += Header(kQueueWait);
  workqueue_wait_.Render(std::string(kQueueWait.name), &out);
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    out += Header(kApiRequests);
    for (const auto& [key, n] : api_responses_) {
      out += std::string(kApiRequests.name) + "{" + Quoted("verb", key.first) + "," + Quoted("code", key.second) +
             "} " + std::to_string(n) + "\n";
    }
    out += Header(kApiRequestDuration);
    for (const auto& [verb, histogram] : api_latency_) {
      histogram->Render(std::string(kApiRequestDuration.name), &out, Quoted("verb", verb));
    }
  }
  RenderJobSamples(now.jobs, &out);
  Gauge(&out, kBuildInfo, "1", "{" + Quoted("version", contract::kReleaseVersion) + "}");

  // As controller-runtime names them: one controller, whose queue has its name.
  const std::string controller = "{" + Quoted("controller", kControllerName) + "}";
  out += Header(kRuntimeReconcileTotal);
  for (std::size_t end = 0; end < reconciles_by_end_.size(); ++end) {
    out += std::string(kRuntimeReconcileTotal.name) + "{" + Quoted("controller", kControllerName) + "," +
           Quoted("result", EndLabel(end)) + "} " + std::to_string(reconciles_by_end_[end].load()) + "\n";
  }
  Counter(&out, kRuntimeReconcileErrors, reconcile_errors_.load(), controller);
  out += Header(kRuntimeReconcileTime);
  reconcile_time_.Render(std::string(kRuntimeReconcileTime.name), &out, Quoted("controller", kControllerName));
  Gauge(&out, kRuntimeMaxConcurrent, std::to_string(now.max_concurrent_reconciles), controller);
  Gauge(&out, kRuntimeActiveWorkers, std::to_string(active_workers_.load()), controller);
  const std::string queue_labels = Quoted("name", kControllerName) + "," + Quoted("controller", kControllerName);
  const std::string queue = "{" + queue_labels + "}";
  Gauge(&out, kWorkqueueDepth, std::to_string(now.queue_waiting), queue);
  Counter(&out, kWorkqueueAdds, queue_queued_.load(), queue);
  Counter(&out, kWorkqueueRetries, queue_retries_.load(), queue);
  out += Header(kWorkqueueQueueDuration);
  queue_taken_.Render(std::string(kWorkqueueQueueDuration.name), &out, queue_labels);
  out += Header(kWorkqueueWorkDuration);
  queue_work_.Render(std::string(kWorkqueueWorkDuration.name), &out, queue_labels);
  Gauge(&out, kWorkqueueUnfinished, Number(now.unfinished_seconds), queue);
  Gauge(&out, kWorkqueueLongest, Number(now.longest_running_seconds), queue);
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    out += Header(kRestClientRequests);
    for (const auto& [key, n] : rest_requests_) {
      const auto& [code, method, host] = key;
      out += std::string(kRestClientRequests.name) + "{" + Quoted("code", code) + "," + Quoted("method", method) +
             "," + Quoted("host", host) + "} " + std::to_string(n) + "\n";
    }
  }
  if (!now.lease_name.empty()) {
    Gauge(&out, kLeaderElectionStatus, now.leader ? "1" : "0", "{" + Quoted("name", now.lease_name) + "}");
  }
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
