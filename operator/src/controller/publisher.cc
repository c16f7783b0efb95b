#include "controller/publisher.h"

#include "contract/names.h"
#include "controller/test_hook.h"
#include "desired/configmap.h"
#include "logging/log.h"
#include "policy/fast_publish.h"

namespace ncclop::controller {
namespace {

using Json = nlohmann::json;

// A conflict means the full reconcile (or an attempt reset) wrote the ConfigMap since it was
// cached: re-read it and decide again, a few times at most.
constexpr int kMaxTries = 3;

bool OwnedBy(const Json& object, const std::string& uid) {
  for (const Json& ref : object["metadata"].value("ownerReferences", Json::array())) {
    if (ref.value("uid", "") == uid) return true;
  }
  return false;
}

}  // namespace

kube::Result<Publisher::Outcome> Publisher::Publish(const std::string& job_key) {
  kube::ObjectPtr object = caches_.jobs->store().Get(job_key);
  if (!object) return Outcome::kSkipped;
  auto parsed = api::ParseNcclJob(*object);
  if (!parsed.ok()) return Outcome::kSkipped;
  const api::NcclJob& job = *parsed;

  std::optional<policy::RootPod> root;
  if (kube::ObjectPtr pod = caches_.pods->store().Get(job.namespace_, contract::PodName(job.name, 0))) {
    root = policy::RootPod{policy::ObservePod(*pod, job.spec.trainer_container), OwnedBy(*pod, job.uid)};
  }
  std::vector<policy::ObservedPod> pods;
  for (const kube::ObjectPtr& pod : caches_.pods->store().ByIndex(kPodsByJob, job.namespace_ + "/" + job.name)) {
    if (OwnedBy(*pod, job.uid)) pods.push_back(policy::ObservePod(*pod, job.spec.trainer_container));
  }
  const int pods_of_attempt = policy::PodsOfAttempt(pods, job.status.attempt, job.spec.replicas);
  const std::string cm_name = contract::ConfigMapName(job.name);
  kube::ObjectPtr cached = caches_.configmaps->store().Get(job.namespace_, cm_name);
  Json current = cached ? *cached : Json();

  for (int attempt = 1; attempt <= kMaxTries; ++attempt) {
    policy::ObservedConfigMap cm;
    if (!current.is_null()) cm = policy::ObserveConfigMap(current);
    policy::FastPublish decision = policy::DecideFastPublish(job, root, pods_of_attempt, cm, api::Clock::now(), pods);
    if (!decision.publish) {
      logging::Debug("controller", "fast path did not publish", {{"job", job_key}, {"why", decision.skipped_because}});
      return decision.retry_soon ? Outcome::kRetrySoon : Outcome::kSkipped;
    }
    Json updated = current;
    updated["data"] = desired::ConfigMap(job, job.status.attempt, decision.publish)["data"];
    auto result = client_->Update(kube::resources::kConfigMaps, job.namespace_, updated);
    if (result.ok()) {
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
