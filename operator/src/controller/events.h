// Writes core/v1 Events about an NcclJob (what `kubectl describe nj` shows). Best effort:
// a lost Event is counted, never retried at the cost of a reconcile. The same event again
// (job, type, reason, message) within kRepeatWindow bumps the count of the one written, as
// the kubelet's recorder does, instead of adding another.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "api/nccl_job.h"
#include "kube/client.h"
#include "metrics/metrics.h"
#include "policy/plan.h"

namespace ncclop::controller {

class EventRecorder {
 public:
  static constexpr std::chrono::minutes kRepeatWindow{10};
  static constexpr std::size_t kMaxRemembered = 4096;

  EventRecorder(std::shared_ptr<kube::Client> client, metrics::Metrics* metrics)
      : client_(std::move(client)), metrics_(metrics) {}
  void Record(const api::NcclJob& job, const policy::Event& event);

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // uid, type, reason, message
  struct Written {
    std::string name;  // the Event object's name
    std::string first_timestamp;
    int count = 1;
    api::Time last;
  };
  bool BumpRepeat(const api::NcclJob& job, const Key& key, const std::string& now);
  void Remember(const Key& key, Written written);

  std::shared_ptr<kube::Client> client_;
  metrics::Metrics* metrics_;
  std::mutex mu_;
  std::map<Key, Written> written_;  // guarded by mu_
};

}  // namespace ncclop::controller
