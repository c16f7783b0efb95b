#include "controller/reconciler.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>

#include "contract/names.h"
#include "controller/in_parallel.h"
#include "controller/test_hook.h"
#include "desired/configmap.h"
#include "desired/gang.h"
#include "desired/rbac.h"
#include "desired/workload.h"
#include "desired/service.h"
#include "logging/log.h"
#include "policy/observed.h"
#include "policy/pod_refusal.h"

namespace ncclop::controller {
namespace {

using Json = nlohmann::json;
namespace res = kube::resources;

kube::Status StaleCache(const std::string& what) { return kube::Status::Local("StaleCache", what); }

// An object of this job's name left by a deleted job of the same name, still being deleted:
// retried with backoff (the controller's rate limiter) until it is gone.
kube::Status LeftoverBeingDeleted(const std::string& what) {
  return kube::Status::Local("WaitingForLeftover", what + " of a deleted job of the same name is still being deleted");
}

// Creates a per-job child, or makes sure the one of that name is this job's: one left by a
// deleted job of the same name is waited for while it is being deleted (backoff), else taken
// over (its owner is gone, so the garbage collector would take it from under this job). A
// RoleBinding's subjects are made the desired ones too: a leftover may bind another
// ServiceAccount.
kube::Status EnsureChild(kube::Client& client, const kube::Resource& r, const std::string& ns, const Json& object) {
  auto created = client.Create(r, ns, object);
  if (created.ok() || !created.status().IsAlreadyExists()) return created.status();
  const std::string name = object["metadata"]["name"];
  auto existing = client.Get(r, ns, name);
  if (!existing.ok()) return existing.status();
  const Json meta = existing->value("metadata", Json::object());
  if (api::BeingDeleted(meta)) return LeftoverBeingDeleted(name);
  Json patch = Json::object();
  const Json& ours = object["metadata"]["ownerReferences"];
  bool owned = false;
  for (const Json& ref : meta.value("ownerReferences", Json::array())) {
    owned = owned || ref.value("uid", "") == ours[0].value("uid", "");
  }
  if (!owned) patch["metadata"]["ownerReferences"] = ours;
  if (object.contains("subjects") && existing->value("subjects", Json()) != object["subjects"]) {
    patch["subjects"] = object["subjects"];
  }
  if (patch.empty()) return kube::Status::Ok();
  return client.Patch(r, ns, name, kube::PatchType::kMerge, patch).status();
}

// How often pod creates refused as Forbidden are tried again (REFERENCE.md says 10 s).
constexpr std::chrono::seconds kForbiddenRetryInterval{10};

// Pod creates or deletes in flight per reconcile.
constexpr std::size_t kPodCallsInFlight = 16;

}  // namespace

Reconciler::Reconciler(std::shared_ptr<kube::Client> client, Caches caches, desired::PodOptions pod_options,
                       metrics::Metrics* metrics)
    : client_(client), caches_(caches), pod_options_(std::move(pod_options)), metrics_(metrics),
      events_(client, metrics) {}

ReconcileResult Reconciler::Reconcile(const std::string& key) {
  kube::ObjectPtr object = caches_.jobs->store().Get(key);
  if (!object) {  // deleted: the garbage collector removes what it owned
    Forget(key);
    return {};
  }
  auto parsed = api::ParseNcclJob(*object);
  if (!parsed.ok()) {
    logging::Warn("controller", "ignoring an NcclJob without usable metadata", {{"key", key}});
    return {};
  }
  api::NcclJob& job = *parsed;
  if (!job.queue_name.empty() && caches_.workloads == nullptr) {
    logging::Warn("controller", "label kueue.x-k8s.io/queue-name ignored: the API server served no Kueue Workloads when the operator started",
                  {{"job", key}, {"queue", job.queue_name}});
    job.queue_name.clear();
  }
  if (job.spec.gang_scheduling == api::GangScheduling::kRequired && !caches_.scheduling_workloads_served &&
      job.spec_error.empty()) {
    job.spec_error =
        "spec.gangScheduling is Required, but the API server served no scheduling.k8s.io/v1alpha1 Workloads when the "
        "operator started (Kubernetes 1.35+ with feature gates GenericWorkload and GangScheduling and "
        "--runtime-config=scheduling.k8s.io/v1alpha1=true; the operator needs RBAC for them); set it to Auto or Disabled";
  }

  std::vector<policy::ObservedPod> pods;
  for (const kube::ObjectPtr& pod : caches_.pods->store().ByIndex(kPodsByJob, job.namespace_ + "/" + job.name)) {
    // Pods with our label but another owner (a job of the same name, deleted and recreated)
    // are not this job's: the garbage collector removes them.
    bool owned = false;
    for (const Json& ref : (*pod)["metadata"].value("ownerReferences", Json::array())) {
      owned = owned || ref.value("uid", "") == job.uid;
    }
    if (owned) pods.push_back(policy::ObservePod(*pod, job.spec.trainer_container));
  }
  policy::ObservedConfigMap cm;
  if (auto cm_object = caches_.configmaps->store().Get(job.namespace_, contract::ConfigMapName(job.name))) {
    cm = policy::ObserveConfigMap(*cm_object);
    // Left by a deleted job of the same name (the garbage collector is slow, or it was orphaned):
    // none of its attempts or ids are this job's. WriteConfigMap takes it over or waits for it.
    if (cm.job_uid != job.uid) cm = policy::ObservedConfigMap{};
  }

  policy::Plan plan = policy::Decide(job, pods, cm, api::Clock::now(), VerdictFor(key, job), ObserveWorkload(job));

  if (plan.ensure_children || plan.attempt_started) {
    if (auto s = EnsureChildren(job); !s.ok()) return {s};
  }
  if (plan.ensure_workload) {
    if (auto s = EnsureWorkload(job); !s.ok()) return {s};
  }
  if (plan.write_configmap) {
    if (auto s = WriteConfigMap(job, plan); !s.ok()) return {s};
    if (plan.publish) TestKillAfterIdWrite();
    if (plan.id_publish_latency_seconds) metrics_->IdPublished(*plan.id_publish_latency_seconds);
  }
  bool status_written = false;
  if (plan.status != job.status) {
    if (auto s = WriteStatus(job, plan, *object); !s.ok()) return {s};
    status_written = true;
    if (plan.attempt_started) metrics_->AttemptStarted();
    if (plan.restarted) metrics_->Restarted();
    if (plan.disrupted) metrics_->Disrupted();
  }
  const bool touches_pods = !plan.delete_pods.empty() || !plan.create_pods.empty() || plan.delete_job;
  if (touches_pods && !status_written) {
    // Decide may have judged an old copy of the job; pods are only changed on a fresh one.
    if (auto s = JobStillCurrent(job); !s.ok()) return {s};
  }
  for (const policy::Event& e : plan.events) events_.Record(job, e);
  if (auto s = DeletePods(job, plan); !s.ok()) return {s};
  if (auto s = CreatePods(job, plan); !s.ok()) {
    // Forbidden (a quota, a policy) may pass at any time: look again at a steady pace rather
    // than after an ever longer backoff (CreatePods recorded the event), or at once when it was
    // refused for too long (the next reconcile fails the job).
    if (s.IsForbidden()) {
      const bool gave_up = !VerdictFor(key, job).empty();
      return {kube::Status::Ok(), gave_up ? std::chrono::seconds(0) : kForbiddenRetryInterval};
    }
    return {s};
  }
  if (plan.finish_workload) {
    if (auto s = FinishWorkload(job, *plan.finish_workload); !s.ok()) return {s};
  }
  if (plan.release_workload_quota) {
    if (auto s = ReleaseWorkloadQuota(job); !s.ok()) return {s};
  }
  if (plan.set_workload_active) {
    if (auto s = SetWorkloadActive(job, *plan.set_workload_active); !s.ok()) return {s};
  }
  if (plan.delete_job) {
    kube::DeleteOptions options;
    options.precondition_uid = job.uid;
    options.propagation_policy = "Background";
    kube::Status s = client_->Delete(kNcclJobs, job.namespace_, job.name, options);
    if (!s.ok() && !s.IsNotFound()) return {s};
    logging::Info("controller", "deleted a finished job after ttlSecondsAfterFinished", {{"job", key}});
  }
  return {kube::Status::Ok(), plan.requeue_after};
}

policy::PodCreateVerdict Reconciler::VerdictFor(const std::string& key, const api::NcclJob& job) {
  std::lock_guard<std::mutex> lock(rejections_mu_);
  auto it = rejections_.find(key);
  if (it == rejections_.end()) return {};
  const Rejection& r = it->second;
  // Done once the cache shows the job finished (the Failed status was written); stale when the
  // job was recreated or its spec changed since.
  if (job.status.Finished() || r.uid != job.uid || r.generation != job.generation) {
    rejections_.erase(it);
    return {};
  }
  return r.verdict;
}

std::chrono::seconds Reconciler::ForbiddenFor(const api::NcclJob& job, int attempt) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(rejections_mu_);
  FirstForbidden& first = forbidden_[job.namespace_ + "/" + job.name];
  if (first.uid != job.uid || first.attempt != attempt) first = {job.uid, attempt, now};
  return std::chrono::duration_cast<std::chrono::seconds>(now - first.at);
}

void Reconciler::Forget(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(rejections_mu_);
    rejections_.erase(key);
    forbidden_.erase(key);
  }
  std::lock_guard<std::mutex> lock(ensured_mu_);
  ensured_.erase(key);
}

kube::Status Reconciler::EnsureChildren(const api::NcclJob& job) {
  const std::string key = job.namespace_ + "/" + job.name;
  {
    std::lock_guard<std::mutex> lock(ensured_mu_);
    if (auto it = ensured_.find(key); it != ensured_.end() && it->second == job.uid) return kube::Status::Ok();
  }
  const std::string& ns = job.namespace_;
  // A template naming its own ServiceAccount keeps it (desired/rbac.h): no per-job one is made.
  if (desired::UsesJobServiceAccount(job)) {
    if (auto s = EnsureChild(*client_, res::kServiceAccounts, ns, desired::ServiceAccount(job)); !s.ok()) return s;
  }
  if (auto s = EnsureChild(*client_, res::kRoles, ns, desired::Role(job)); !s.ok()) return s;
  if (auto s = EnsureChild(*client_, res::kRoleBindings, ns, desired::RoleBinding(job)); !s.ok()) return s;
  if (auto s = EnsureChild(*client_, res::kServices, ns, desired::HeadlessService(job)); !s.ok()) return s;
  if (UsesGang(job)) {
    if (auto s = EnsureSchedulingWorkload(job); !s.ok()) return s;
  }
  std::lock_guard<std::mutex> lock(ensured_mu_);
  ensured_[key] = job.uid;
  return kube::Status::Ok();
}

kube::Status Reconciler::WriteConfigMap(const api::NcclJob& job, const policy::Plan& plan) {
  Json desired = desired::ConfigMap(job, plan.status.attempt, plan.publish);
  kube::ObjectPtr cached = caches_.configmaps->store().Get(job.namespace_, contract::ConfigMapName(job.name));
  if (!cached) {
    auto created = client_->Create(res::kConfigMaps, job.namespace_, desired);
    if (!created.status().IsAlreadyExists()) return created.status();
    // Ours and not yet cached: wait for the cache (writing now could undo a publish). Someone
    // else's (a deleted job's of the same name, or one without our label): take it over below.
    auto fresh = client_->Get(res::kConfigMaps, job.namespace_, contract::ConfigMapName(job.name));
    if (!fresh.ok()) return fresh.status();
    const Json data = (*fresh).value("data", Json::object());
    if (data.is_object() && data.value(std::string(contract::kDataJobUid), "") == job.uid) {
      return StaleCache("ConfigMap exists but is not in the cache yet");
    }
    return TakeOverConfigMap(job, *fresh, desired);
  }
  return TakeOverConfigMap(job, *cached, desired);
}

kube::Status Reconciler::TakeOverConfigMap(const api::NcclJob& job, const Json& current, const Json& desired) {
  if (api::BeingDeleted(current.value("metadata", Json::object()))) {
    return LeftoverBeingDeleted("ConfigMap " + contract::ConfigMapName(job.name));
  }
  // Conditional on the cached resourceVersion: a publish never overwrites a newer attempt.
  Json updated = current;
  updated["data"] = desired["data"];
  // One left by a deleted job of the same name (orphaned, or not yet collected) becomes ours.
  updated["metadata"]["ownerReferences"] = desired["metadata"]["ownerReferences"];
  for (auto& [k, v] : desired["metadata"]["labels"].items()) updated["metadata"]["labels"][k] = v;
  auto result = client_->Update(res::kConfigMaps, job.namespace_, updated);
  if (result.status().IsConflict()) return StaleCache("ConfigMap changed since it was cached");
  return result.status();
}

kube::Status Reconciler::WriteStatus(const api::NcclJob& job, const policy::Plan& plan, const Json& object) {
  if (job.status.id_published_time.empty() && !plan.status.id_published_time.empty()) TestKillAfterIdWrite();
  Json updated = object;
  updated["status"] = api::StatusToJson(plan.status);
  auto result = client_->UpdateStatus(kNcclJobs, job.namespace_, updated);
  if (result.status().IsConflict()) return StaleCache("NcclJob changed since it was cached");
  return result.status();
}

kube::Status Reconciler::JobStillCurrent(const api::NcclJob& job) {
  auto fresh = client_->Get(kNcclJobs, job.namespace_, job.name);
  if (!fresh.ok()) return fresh.status().IsNotFound() ? StaleCache("NcclJob was deleted") : fresh.status();
  if ((*fresh)["metadata"].value("resourceVersion", "") != job.resource_version) {
    return StaleCache("NcclJob changed since it was cached");
  }
  return kube::Status::Ok();
}

kube::Status Reconciler::DeletePods(const api::NcclJob& job, const policy::Plan& plan) {
  std::mutex mu;
  kube::Status first_error;  // guarded by mu
  InParallel(plan.delete_pods.size(), kPodCallsInFlight, [&](std::size_t i) {
    kube::Status s = client_->Delete(res::kPods, job.namespace_, plan.delete_pods[i]);
    if (s.ok() || s.IsNotFound()) return true;
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.ok()) first_error = s;
    return false;
  });
  return first_error;
}

kube::Status Reconciler::CreatePods(const api::NcclJob& job, const policy::Plan& plan) {
  // Creates are independent and each is one round trip, so they overlap; the bound keeps the
  // API server's mutating in-flight limit and the client's idle connection pool in mind. The
  // attempt is already in status (plan.h's order), so any subset of these may land.
  const std::vector<int>& indices = plan.create_pods;
  if (indices.empty()) return kube::Status::Ok();
  auto flavors = AdmittedFlavors(job);  // Kueue's placement, read when the pods are made (as Kueue does)
  if (!flavors.ok()) return flavors.status();
  std::atomic<bool> template_rejected{false};
  std::mutex mu;
  kube::Status first_error;  // guarded by mu
  int errors = 0;            // guarded by mu
  // The refused pod of the lowest index, so that every try reports the same one (and a
  // repeated event only bumps its count).
  std::optional<std::pair<int, kube::Status>> refused;  // guarded by mu
  const bool gang = UsesGang(job);
  InParallel(indices.size(), kPodCallsInFlight, [&](std::size_t i) {
    const int index = indices[i];
    Json pod = desired::Pod(job, index, plan.status.attempt, pod_options_);
    if (gang) desired::ReferenceSchedulingWorkload(pod, job, plan.status.attempt);
    desired::ApplyFlavors(pod, *flavors);
    auto created = client_->Create(res::kPods, job.namespace_, pod);
    if (created.ok() || created.status().IsAlreadyExists()) return true;
    const kube::Status& status = created.status();
    const bool rejected = status.IsInvalid() || status.IsBadRequest() || status.IsForbidden();
    std::lock_guard<std::mutex> lock(mu);
    if (errors++ == 0 || (rejected && !template_rejected)) first_error = status;
    if (rejected) {
      template_rejected = true;  // every other pod would be refused the same way: stop
      if (!refused || index < refused->first) refused = std::make_pair(index, status);
    }
    return !rejected;
  });
  const std::string key = job.namespace_ + "/" + job.name;
  if (!refused) {
    std::lock_guard<std::mutex> lock(rejections_mu_);
    forbidden_.erase(key);  // the pods were let in: a later refusal starts a new clock
  } else {
    // Malformed (policy/pod_refusal.h): the template is wrong for good: remember it so the
    // next reconcile fails the job. Forbidden (a quota, Pod Security, a missing
    // ServiceAccount) may pass: retried for failurePolicy.forbiddenRetrySeconds, then the job
    // fails. Anything else (a webhook's answer) may pass: retried.
    const auto& [index, status] = *refused;
    const std::string what = policy::RefusalMessage(contract::PodName(job.name, index), status);
    const int limit = job.spec.failure_policy.forbidden_retry_seconds;
    const std::chrono::seconds refused_for =
        status.IsForbidden() ? ForbiddenFor(job, plan.status.attempt) : std::chrono::seconds(0);
    if (policy::IsMalformedPod(status)) {
      std::lock_guard<std::mutex> lock(rejections_mu_);
      rejections_[key] = {job.uid, job.generation, policy::TemplateRejected(what)};
    } else if (status.IsForbidden() && refused_for.count() >= limit) {
      std::lock_guard<std::mutex> lock(rejections_mu_);
      rejections_[key] = {job.uid, job.generation, policy::ForbiddenTooLong(what, static_cast<int>(refused_for.count()))};
    } else {
      events_.Record(job, {"Warning", "PodCreateFailed", what + " (will retry)"});
    }
  }
  if (errors > 1) {
    logging::Warn("controller", "some pods could not be created; will retry",
                  {{"job", job.namespace_ + "/" + job.name}, {"failed", std::to_string(errors)},
                   {"of", std::to_string(indices.size())}});
  }
  return first_error;
}

}  // namespace ncclop::controller
