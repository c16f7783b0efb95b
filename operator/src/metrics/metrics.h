// The operator's Prometheus metrics. Recording is lock-free (counters) or takes a short
// mutex (histograms), so reconcile workers never wait on a scrape; Render() writes the
// text exposition format 0.0.4.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ncclop::metrics {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Appends the _bucket/_sum/_count lines for `name`.
  void Render(const std::string& name, std::string* out) const;

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

  // `jobs_by_state` comes from the informer cache at scrape time (a gauge needs no bookkeeping).
  std::string Render(const std::map<std::string, int>& jobs_by_state, bool leader) const;

 private:
  std::atomic<std::uint64_t> reconciles_{0};
  std::atomic<std::uint64_t> reconcile_errors_{0};
  std::atomic<std::uint64_t> attempts_started_{0};
  std::atomic<std::uint64_t> restarts_{0};
  std::atomic<std::uint64_t> disruptions_{0};
  std::atomic<std::uint64_t> ids_published_{0};
  std::atomic<std::uint64_t> events_dropped_{0};
  Histogram reconcile_duration_;
  Histogram id_publish_latency_;
};

}  // namespace ncclop::metrics
