// The operator's Prometheus metrics (their names, types and labels: metrics/catalog.h).
// Recording is lock-free (counters) or takes a short mutex (histograms), so reconcile workers
// never wait on a scrape; Render() writes the text exposition format 0.0.4.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "metrics/job_samples.h"

namespace ncclop::metrics {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Appends the _bucket/_sum/_count lines for `name`; `labels` (e.g. `verb="GET"`) go on each.
  void Render(const std::string& name, std::string* out, const std::string& labels = "") const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<std::uint64_t> counts_;  // guarded by mu_; one per bound, plus +Inf
  double sum_ = 0;                     // guarded by mu_
  std::uint64_t count_ = 0;            // guarded by mu_
};

// ncclop_jobs' label values: every state of status.state, 0 included, so a dashboard's series
// never vanish; a job without one (not yet seen by the operator) or with a state this build
// does not know counts as Unknown (Prometheus label values are never empty).
inline constexpr const char* kUnknownState = "Unknown";
std::map<std::string, int> JobsByStateLabel(const std::map<std::string, int>& jobs_by_state);

// How a reconcile ended, in controller-runtime's four words (controller_runtime_reconcile_total).
enum class ReconcileEnd { kSuccess, kRequeueAfter, kRequeue, kError };

// What Render reads from the running operator at scrape time (gauges need no bookkeeping).
struct Scrape {
  std::map<std::string, int> jobs_by_state;
  std::vector<JobSample> jobs;  // ncclop_job_*
  bool leader = false;
  std::size_t queue_ready = 0;  // ncclop_workqueue_depth: ready for a worker
  std::size_t queue_waiting = 0;  // workqueue_depth: added, not yet taken (client-go's depth)
  double unfinished_seconds = 0;
  double longest_running_seconds = 0;
  int max_concurrent_reconciles = 0;
  // The Lease's name with --leader-elect (leader_election_master_status{name}); empty: no election.
  std::string lease_name;
};

class Metrics {
 public:
  Metrics();

  void ReconcileStarted() { active_workers_.fetch_add(1, std::memory_order_relaxed); }
  void ReconcileDone(double seconds, ReconcileEnd end);
  void AttemptStarted() { attempts_started_.fetch_add(1, std::memory_order_relaxed); }
  void Restarted() { restarts_.fetch_add(1, std::memory_order_relaxed); }
  void Disrupted() { disruptions_.fetch_add(1, std::memory_order_relaxed); }
  void IdPublished(double latency_seconds);
  void EventDropped() { events_dropped_.fetch_add(1, std::memory_order_relaxed); }
  void WorkQueueAdded() { workqueue_adds_.fetch_add(1, std::memory_order_relaxed); }
  void WorkQueueWaited(double seconds) { workqueue_wait_.Observe(seconds); }
  // client-go's queue metrics (kube::WorkQueueOptions' on_queued, on_taken, on_done, on_retry).
  void QueueQueued() { queue_queued_.fetch_add(1, std::memory_order_relaxed); }
  void QueueTaken(double seconds) { queue_taken_.Observe(seconds); }
  void QueueDone(double seconds) { queue_work_.Observe(seconds); }
  void QueueRetried() { queue_retries_.fetch_add(1, std::memory_order_relaxed); }
  // One HTTP attempt of the API client to `host` (host:port); code 0 = no response (a transport
  // error); seconds: how long the attempt took (the API server's latency as the operator sees it).
  void ApiResponse(std::string_view method, int code, double seconds, std::string_view host = "");

  std::string Render(const Scrape& now) const;

 private:
  std::atomic<std::uint64_t> reconciles_{0};
  std::atomic<std::uint64_t> reconcile_errors_{0};
  std::atomic<std::uint64_t> attempts_started_{0};
  std::atomic<std::uint64_t> restarts_{0};
  std::atomic<std::uint64_t> disruptions_{0};
  std::atomic<std::uint64_t> ids_published_{0};
  std::atomic<std::uint64_t> events_dropped_{0};
  std::atomic<std::uint64_t> workqueue_adds_{0};
  std::atomic<std::uint64_t> queue_queued_{0};
  std::atomic<std::uint64_t> queue_retries_{0};
  std::atomic<int> active_workers_{0};
  std::array<std::atomic<std::uint64_t>, 4> reconciles_by_end_{};  // by ReconcileEnd
  Histogram reconcile_duration_;
  Histogram reconcile_time_;  // controller-runtime's buckets
  Histogram queue_taken_;
  Histogram queue_work_;
  Histogram id_publish_latency_;
  Histogram workqueue_wait_;
  mutable std::mutex api_mu_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> api_responses_;  // (verb, code), guarded by api_mu_
  std::map<std::string, std::unique_ptr<Histogram>> api_latency_;                // by verb, guarded by api_mu_
  // (code, method, host) as client-go counts them, guarded by api_mu_
  std::map<std::tuple<std::string, std::string, std::string>, std::uint64_t> rest_requests_;
};

}  // namespace ncclop::metrics
