#include "controller/publisher.h"

#include "contract/names.h"
#include "controller/test_hook.h"
#include "desired/configmap.h"
#include "logging/log.h"
#include "observed/attempt.h"
#include "observed/configmap.h"
#include "policy/fast_publish.h"

namespace ncclop::controller {
namespace {

using Json = nlohmann::json;

// A conflict means the full reconcile (or an attempt reset) wrote the ConfigMap since it was
// cached: re-read it and decide again, a few times at most.
constexpr int kMaxTries = 3;

}  // namespace

kube::Result<Publisher::Outcome> Publisher::Publish(const std::string& job_key) {
  std::optional<JobObservation> seen = ObserveJob(caches_, job_key);
  if (!seen) return Outcome::kSkipped;
  const api::NcclJob& job = seen->job;
  const observed::AttemptView view = observed::ViewAttempt(seen->pods, job.status.attempt, job.spec.replicas);
  const std::string cm_name = contract::ConfigMapName(job.name);
  Json current = seen->configmap_object ? *seen->configmap_object : Json();

  for (int attempt = 1; attempt <= kMaxTries; ++attempt) {
    const observed::ObservedConfigMap cm = observed::ObserveConfigMap(current);
    policy::PublishDecision decision = policy::DecideFastPublish(job, view, cm, api::Clock::now());
    if (!decision.publish) {
      logging::Debug("controller", "fast path did not publish", {{"job", job_key}, {"why", decision.skipped_because}});
      return decision.retry_soon ? Outcome::kRetrySoon : Outcome::kSkipped;
    }
    Json updated = current;
    updated["data"] = desired::ConfigMap(job, job.status.attempt, decision.publish)["data"];
    auto result = client_->Update(kube::resources::kConfigMaps, job.namespace_, updated);
    if (result.ok()) {
      memory_->IdWritten(job, job.status.attempt);
      TestKillAfterIdWrite();
      if (auto started = api::ParseTime(job.status.attempt_start_time)) {
        metrics_->IdPublished(std::chrono::duration<double>(api::Clock::now() - *started).count());
      }
      logging::Info("controller", "published the id (fast path)",
                    {{"job", job_key}, {"attempt", std::to_string(job.status.attempt)}});
      return Outcome::kPublished;
    }
    if (!result.status().IsConflict()) return result.status();
    auto fresh = client_->Get(kube::resources::kConfigMaps, job.namespace_, cm_name);
    if (!fresh.ok()) return fresh.status().IsNotFound() ? kube::Result<Outcome>(Outcome::kSkipped) : fresh.status();
    current = std::move(*fresh);
  }
  return Outcome::kSkipped;  // still contended: the full reconcile publishes
}

}  // namespace ncclop::controller
