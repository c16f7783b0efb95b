// The operator's Prometheus metrics. Recording is lock-free (counters) or takes a short
// mutex (histograms), so reconcile workers never wait on a scrape; Render() writes the
// text exposition format 0.0.4.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

class Metrics {
 public:
  Metrics();

  void ReconcileDone(double seconds, bool ok);
  void AttemptStarted() { attempts_started_.fetch_add(1, std::memory_order_relaxed); }
  void Restarted() { restarts_.fetch_add(1, std::memory_order_relaxed); }
  void Disrupted() { disruptions_.fetch_add(1, std::memory_order_relaxed); }
  void IdPublished(double latency_seconds);
  void EventDropped() { events_dropped_.fetch_add(1, std::memory_order_relaxed); }
  void WorkQueueAdded() { workqueue_adds_.fetch_add(1, std::memory_order_relaxed); }
  void WorkQueueWaited(double seconds) { workqueue_wait_.Observe(seconds); }
  // One HTTP attempt of the API client; code 0 = no response (a transport error); seconds: how
  // long the attempt took (the API server's latency as the operator sees it).
  void ApiResponse(std::string_view method, int code, double seconds);

  // `jobs_by_state` and `queue_depth` are read at scrape time (gauges need no bookkeeping).
  std::string Render(const std::map<std::string, int>& jobs_by_state, bool leader, std::size_t queue_depth = 0) const;

 private:
  std::atomic<std::uint64_t> reconciles_{0};
  std::atomic<std::uint64_t> reconcile_errors_{0};
  std::atomic<std::uint64_t> attempts_started_{0};
  std::atomic<std::uint64_t> restarts_{0};
  std::atomic<std::uint64_t> disruptions_{0};
  std::atomic<std::uint64_t> ids_published_{0};
  std::atomic<std::uint64_t> events_dropped_{0};
  std::atomic<std::uint64_t> workqueue_adds_{0};
  Histogram reconcile_duration_;
  Histogram id_publish_latency_;
  Histogram workqueue_wait_;
  mutable std::mutex api_mu_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> api_responses_;  // (verb, code), guarded by api_mu_
  std::map<std::string, std::unique_ptr<Histogram>> api_latency_;                // by verb, guarded by api_mu_
};

}  // namespace ncclop::metrics
