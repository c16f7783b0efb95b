// The id publish fast path's I/O: Publish(job key) observes the job (controller/observe.h),
// asks policy::DecideFastPublish (the publish rule, policy/publish_rule.h), and writes the id
// into the ConfigMap with a conditional Update (the cached resourceVersion). It runs on its own queue
// and worker, so a publish never waits behind a long reconcile of the same job. Idempotent:
// a second call, or the full reconcile's publish, finds the id there and writes nothing.
#pragma once

#include <memory>
#include <string>

#include "controller/job_memory.h"
#include "controller/observe.h"
#include "kube/client.h"
#include "metrics/metrics.h"

namespace ncclop::controller {

class Publisher {
 public:
  // `memory`: told of each id written (JobMemory::IdWritten), for the full reconcile.
  Publisher(std::shared_ptr<kube::Client> client, Caches caches, metrics::Metrics* metrics, JobMemory* memory)
      : client_(std::move(client)), caches_(caches), metrics_(metrics), memory_(memory) {}

  enum class Outcome { kPublished, kSkipped, kRetrySoon };
  // kPublished: this call wrote the id (the caller then enqueues the full reconcile, which
  // records status.idPublishedTime and the IdPublished event). kRetrySoon: pods of the
  // attempt are still being created. An error only for a failed API call; the full
  // reconcile publishes in that case.
  kube::Result<Outcome> Publish(const std::string& job_key);

 private:
  std::shared_ptr<kube::Client> client_;
  Caches caches_;
  metrics::Metrics* metrics_;
  JobMemory* memory_;
};

}  // namespace ncclop::controller
