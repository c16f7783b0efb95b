// Writes core/v1 Events about an NcclJob (what `kubectl describe nj` shows). Best effort:
// a lost Event is counted, never retried at the cost of a reconcile.
#pragma once

#include <memory>
#include <string>

#include "api/nccl_job.h"
#include "kube/client.h"
#include "metrics/metrics.h"
#include "policy/plan.h"

namespace ncclop::controller {

class EventRecorder {
 public:
  EventRecorder(std::shared_ptr<kube::Client> client, metrics::Metrics* metrics)
      : client_(std::move(client)), metrics_(metrics) {}
  void Record(const api::NcclJob& job, const policy::Event& event);

 private:
  std::shared_ptr<kube::Client> client_;
  metrics::Metrics* metrics_;
};

}  // namespace ncclop::controller
