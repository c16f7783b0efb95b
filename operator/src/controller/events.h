// Writes core/v1 Events about an NcclJob (what `kubectl describe nj` shows). Best effort:
// a lost Event is counted, never retried at the cost of a reconcile. The same event again
// (job, type, reason, message) within kRepeatWindow of its last sighting bumps the count of the
// one written, as the kubelet's recorder does, instead of adding another; what is remembered
// for that is bounded by time and count (event_repeats.h).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "api/nccl_job.h"
#include "controller/event_repeats.h"
#include "kube/client.h"
#include "metrics/metrics.h"
#include "policy/plan.h"

namespace ncclop::controller {

class EventRecorder {
 public:
  static constexpr std::chrono::minutes kRepeatWindow{10};
  static constexpr std::size_t kMaxRemembered = 4096;  // client-go's event correlator's LRU size

  EventRecorder(std::shared_ptr<kube::Client> client, metrics::Metrics* metrics)
      : client_(std::move(client)), metrics_(metrics), written_(kRepeatWindow, kMaxRemembered) {}
  void Record(const api::NcclJob& job, const policy::Event& event);

 private:
  bool BumpRepeat(const api::NcclJob& job, const EventRepeats::Key& key, const std::string& now);

  std::shared_ptr<kube::Client> client_;
  metrics::Metrics* metrics_;
  std::mutex mu_;
  EventRepeats written_;  // guarded by mu_
};

}  // namespace ncclop::controller
