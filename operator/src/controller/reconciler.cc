#include "controller/reconciler.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>

#include "contract/names.h"
#include "controller/in_parallel.h"
#include "controller/test_hook.h"
#include "desired/compute_domain.h"
#include "desired/configmap.h"
#include "desired/env_configmap.h"
#include "desired/gang_workload.h"
#include "desired/kueue_topology.h"
#include "desired/kueue_workload.h"
#include "desired/pod_shape.h"
#include "desired/rbac.h"
#include "desired/service.h"
#include "logging/log.h"
#include "observed/node_features.h"
#include "observed/ownership.h"
#include "policy/decide.h"
#include "policy/pod_refusal.h"
#include "status/write_pace.h"

namespace ncclop::controller {
namespace {

using Json = nlohmann::json;
namespace res = kube::resources;

// Creates a per-job child, or makes sure the one of that name is this job's: one left by a
// deleted job of the same name is waited for while it is being deleted (backoff), else taken
// over (its owner is gone, so the garbage collector would take it from under this job). A
// RoleBinding's subjects are made the desired ones too: a leftover may bind another
// ServiceAccount. An object of this job's name left by a deleted job of the same name, still
// being deleted, is retried with backoff (the controller's rate limiter) until it is gone.
ReconcileResult EnsureChild(kube::Client& client, const kube::Resource& r, const std::string& ns, const Json& object) {
  auto created = client.Create(r, ns, object);
  if (created.ok() || !created.status().IsAlreadyExists()) return ReconcileResult::From(created.status());
  const std::string name = object["metadata"]["name"];
  auto existing = client.Get(r, ns, name);
  if (!existing.ok()) return ReconcileResult::Error(existing.status());
  const Json meta = existing->value("metadata", Json::object());
  if (api::BeingDeleted(meta)) return ReconcileResult::WaitingForLeftover(name);
  // An immutable one (the job's env) cannot be mended: one whose data is not this job's is
  // deleted (only that object: a uid precondition), and made again once gone.
  if (object.value("immutable", false) &&
      (!existing->value("immutable", false) || existing->value("data", Json()) != object["data"])) {
    kube::DeleteOptions options;
    options.precondition_uid = meta.value("uid", "");
    kube::Status s = client.Delete(r, ns, name, options);
    if (!s.ok() && !s.IsNotFound() && !s.IsConflict()) return ReconcileResult::Error(s);
    return ReconcileResult::WaitingForLeftover(name, "has data that is not the job's: deleted, made again once gone");
  }
  Json patch = Json::object();
  const Json& ours = object["metadata"]["ownerReferences"];
  if (!observed::OwnedBy(*existing, ours[0].value("uid", ""))) patch["metadata"]["ownerReferences"] = ours;
  // Without the job label it is not in the operator's cache (Reconciler::ChildMissing).
  if (observed::OwningJobKey(*existing).empty()) patch["metadata"]["labels"] = object["metadata"]["labels"];
  if (object.contains("subjects") && existing->value("subjects", Json()) != object["subjects"]) {
    patch["subjects"] = object["subjects"];
  }
  if (patch.empty()) return ReconcileResult::Done();
  return ReconcileResult::From(client.Patch(r, ns, name, kube::PatchType::kMerge, patch).status());
}

// A job with spec.computeDomain where the API server served no ComputeDomains at start: its pods
// would wait for ever for a channel no driver makes.
policy::PodCreateVerdict ComputeDomainNotServed() {
  return {"ComputeDomainNotServed",
          "spec.computeDomain asks for an NVIDIA ComputeDomain, but the API server did not serve "
          "computedomains.resource.nvidia.com/v1beta1 to the operator when it started: install NVIDIA's DRA driver "
          "for GPUs (k8s-dra-driver-gpu) with its ComputeDomain support, give the operator get, list, watch, create "
          "and patch on computedomains (the chart does), restart the operator, and create the job again; or "
          "leave spec.computeDomain out"};
}

// How often pod creates refused as Forbidden are tried again (REFERENCE.md says 10 s).
constexpr std::chrono::seconds kForbiddenRetryInterval{10};

// Pod creates or deletes in flight per reconcile. 32 against 16 (bench/scale/RESULTS.md, J6): a
// 1024-pod attempt's pods all existed 1.0 s sooner, a 4096-pod one's 4.7 s, for the same API
// server CPU; the API server's priority and fairness queues what it cannot take at once.
constexpr std::size_t kPodCallsInFlight = 32;

// The earlier of two times to look again (nullopt: none).
std::optional<std::chrono::seconds> Sooner(std::optional<std::chrono::seconds> a, std::optional<std::chrono::seconds> b) {
  if (!a || !b) return a ? a : b;
  return std::min(*a, *b);
}

}  // namespace

Reconciler::Reconciler(std::shared_ptr<kube::Client> client, Caches caches, desired::PodOptions pod_options,
                       metrics::Metrics* metrics, std::chrono::seconds status_counts_interval)
    : client_(client), caches_(caches), pod_options_(std::move(pod_options)), metrics_(metrics),
      status_counts_interval_(status_counts_interval), events_(client, metrics),
      kueue_(client, caches_.kueue_workloads, pod_options_, memory_) {}

ReconcileResult Reconciler::Reconcile(const std::string& key) {
  // Counts held back: a job whose pods change fast, reconciled at most once per spacing.
  if (auto wait = status::ReconcileWait(memory_.SinceCountsHeld(key), status::kHeldReconcileSpacing)) {
    return ReconcileResult::RequeueAfter(std::chrono::ceil<std::chrono::milliseconds>(*wait));
  }
  std::optional<JobObservation> seen = ObserveJob(caches_, key);
  if (!seen) {  // deleted (the garbage collector removes what it owned), or unusable (logged)
    if (!caches_.jobs->Get(key)) {
      memory_.Forget(key);
      if (caches_.pod_memo != nullptr) caches_.pod_memo->Forget(key);
    }
    return ReconcileResult::Done();
  }
  api::NcclJob& job = seen->job;
  kueue_.IgnoreQueueUnlessServed(job);
  if (job.spec.gang_scheduling == api::GangScheduling::kRequired && caches_.gang_api == desired::GangApi::kNone &&
      job.spec_error.empty()) {
    job.spec_error =
        "spec.gangScheduling is Required, but the API server served no scheduling.k8s.io gang scheduling API when "
        "the operator started (Kubernetes 1.37: feature gate GenericWorkload and "
        "--runtime-config=scheduling.k8s.io/v1beta1=true; 1.36: gates GenericWorkload and GangScheduling and "
        "scheduling.k8s.io/v1alpha2=true; 1.35: the same gates and scheduling.k8s.io/v1alpha1=true; the operator "
        "needs RBAC for workloads and podgroups); set it to Auto or Disabled";
  }
  if (!job.spec.gang_topology_key.empty() && !desired::GangHasPodGroups(caches_.gang_api) && job.spec_error.empty()) {
    job.spec_error =
        "spec.gangTopologyKey needs Kubernetes' PodGroups (scheduling.k8s.io v1beta1 on 1.37, v1alpha2 on 1.36, with "
        "feature gates GenericWorkload and TopologyAwareWorkloadScheduling), which the API server did not serve when "
        "the operator started; remove it, or for a job in a Kueue queue use Kueue's topology annotations";
  }

  if (job.spec_error.empty()) job.spec_error = desired::GpuRequestConflict(job, pod_options_.gpu_resource);

  policy::Remembered remembered = memory_.Recall(job);
  if (job.spec.compute_domain.requested && caches_.compute_domains == nullptr && remembered.pod_create_verdict.empty()) {
    remembered.pod_create_verdict = ComputeDomainNotServed();
  }
  remembered.gang_scheduled = UsesGang(job);
  if (job.spec.failure_policy.restart_strategy == api::RestartStrategy::kAuto) {
    remembered.nodes_restart_in_place = NodesRestartInPlace();
  }
  policy::Plan plan = policy::Decide(job, seen->pods, seen->configmap, api::Clock::now(), remembered, kueue_.Observe(job));
  return Carry(*seen, plan);
}

// plan.h's order.
ReconcileResult Reconciler::Carry(const JobObservation& seen, const policy::Plan& plan) {
  const api::NcclJob& job = seen.job;
  if (plan.ensure_children || plan.attempt_started) {
    if (auto r = EnsureChildren(job); !r.done()) {
      // A quota (count/configmaps, count/services) or a policy refused one: no pod is made until
      // it passes, so say why where the user looks (the retry is the controller's backoff).
      if (r.status().IsForbidden()) {
        events_.Record(job, {"Warning", "ChildCreateForbidden",
                             "the API server refused an object the job's pods need: " + r.status().message() +
                                 " (will retry)"});
      }
      return r;
    }
  }
  bool priority_class_missing = false;
  if (plan.ensure_kueue_workload) {
    std::optional<ReconcileResult> r = kueue_.Ensure(job);
    priority_class_missing = !r;
    if (r && !r->done()) return *r;
  }
  if (plan.write_configmap) {
    if (auto r = WriteConfigMap(seen, plan); !r.done()) return r;
    if (plan.publish) {
      memory_.IdWritten(job, plan.status.attempt);
      TestKillAfterIdWrite();
    }
    if (plan.id_publish_latency_seconds) metrics_->IdPublished(*plan.id_publish_latency_seconds);
  }
  bool status_written = false;
  // A change of the pod counts alone may wait (status/write_pace.h): the job is looked at again
  // when it may be written, so the newest counts are never left unwritten.
  std::optional<std::chrono::seconds> status_wait;
  const status::WritePace pace =
      status::PaceWrite(job.status, plan.status, memory_.SinceStatusWrite(job), status_counts_interval_);
  if (pace.when == status::WritePace::When::kLater) status_wait = std::chrono::ceil<std::chrono::seconds>(pace.wait);
  memory_.CountsHeld(observed::JobKey(job.namespace_, job.name), pace.when == status::WritePace::When::kLater);
  if (pace.when == status::WritePace::When::kNow) {
    if (auto r = WriteStatus(seen, plan); !r.done()) return r;
    memory_.StatusWritten(job);
    status_written = true;
    if (plan.attempt_started) metrics_->AttemptStarted();
    if (plan.restarted) metrics_->Restarted();
    if (plan.disrupted) metrics_->Disrupted();
  }
  const bool touches_pods =
      !plan.delete_pods.empty() || !plan.move_pods.empty() || !plan.create_pods.empty() || plan.delete_job;
  if (touches_pods && !status_written) {
    // Decide may have judged an old copy of the job; pods are only changed on a fresh one.
    if (auto r = JobStillCurrent(job); !r.done()) return r;
  }
  for (const policy::Event& e : plan.events) events_.Record(job, e);
  if (auto r = ReconcileResult::From(DeletePods(job, plan)); !r.done()) return r;
  if (auto r = ReconcileResult::From(MovePods(job, plan)); !r.done()) return r;
  if (!plan.create_pods.empty() && UsesGang(job) && desired::GangHasPodGroups(caches_.gang_api)) {
    // The attempt's pods join its PodGroup; an earlier attempt's group goes once its pods are gone.
    if (auto r = EnsureGangPodGroup(job, plan.status.attempt); !r.done()) return r;
    if (auto r = ReconcileResult::From(DeleteEarlierGangPodGroups(job, plan.status.attempt)); !r.done()) return r;
  }
  if (auto s = CreatePods(job, plan); !s.ok()) {
    // Forbidden (a quota, a policy) may pass at any time: look again at a steady pace rather
    // than after an ever longer backoff (CreatePods recorded the event), or at once when it was
    // refused for too long (the next reconcile fails the job).
    if (s.IsForbidden()) {
      const bool gave_up = !memory_.VerdictFor(job).empty();
      return ReconcileResult::RequeueAfter(gave_up ? std::chrono::seconds(0) : kForbiddenRetryInterval);
    }
    return ReconcileResult::Error(s);
  }
  if (auto r = ReconcileResult::From(kueue_.Update(job, plan)); !r.done()) return r;
  if (plan.delete_job) {
    if (auto r = DeleteFinishedJob(job); !r.done()) return r;
  }
  std::optional<std::chrono::seconds> requeue_after = Sooner(plan.requeue_after, status_wait);
  if (priority_class_missing) {
    // No watch on priority classes: look again at a steady pace for the class to appear.
    return ReconcileResult::RequeueAfter(*Sooner(requeue_after, KueueWorkloads::kPriorityClassRetryInterval));
  }
  return ReconcileResult::DoneOrRequeue(requeue_after);
}

ReconcileResult Reconciler::DeleteFinishedJob(const api::NcclJob& job) {
  kube::DeleteOptions options;
  options.precondition_uid = job.uid;
  options.propagation_policy = "Background";
  kube::Status s = client_->Delete(kNcclJobs, job.namespace_, job.name, options);
  if (!s.ok() && !s.IsNotFound()) return ReconcileResult::Error(s);
  logging::Info("controller", "deleted a finished job after ttlSecondsAfterFinished",
                {{"job", observed::JobKey(job.namespace_, job.name)}});
  return ReconcileResult::Done();
}

void Reconciler::ChildChanged(const std::string& key) { memory_.ChildChanged(key); }

ReconcileResult Reconciler::EnsureChildren(const api::NcclJob& job) {
  const std::string key = observed::JobKey(job.namespace_, job.name);
  const JobMemory::Children children = memory_.ChildrenOf(key, job.uid);
  // Made sure of once a process, and again when one is gone (deleted by hand).
  if (children.ensured && (children.change == 0 || !ChildMissing(job))) {
    memory_.ClearChildChange(key, children.change);
    return ReconcileResult::Done();
  }
  const std::string& ns = job.namespace_;
  // A template naming its own ServiceAccount keeps it (desired/rbac.h): no per-job one is made.
  if (desired::UsesJobServiceAccount(job)) {
    if (auto r = EnsureChild(*client_, res::kServiceAccounts, ns, desired::ServiceAccount(job)); !r.done()) return r;
  }
  if (auto r = EnsureChild(*client_, res::kRoles, ns, desired::Role(job)); !r.done()) return r;
  if (auto r = EnsureChild(*client_, res::kRoleBindings, ns, desired::RoleBinding(job)); !r.done()) return r;
  if (auto r = EnsureChild(*client_, res::kServices, ns, desired::HeadlessService(job)); !r.done()) return r;
  if (auto r = EnsureChild(*client_, res::kConfigMaps, ns, desired::EnvConfigMap(job)); !r.done()) return r;
  if (job.spec.compute_domain.requested && caches_.compute_domains != nullptr) {
    if (auto r = EnsureChild(*client_, kComputeDomains, ns, desired::ComputeDomain(job)); !r.done()) return r;
  }
  if (UsesGang(job)) {
    if (auto r = EnsureGangWorkload(job); !r.done()) return r;
    if (CurrentGangPodGroupMissing(job)) {
      if (auto r = EnsureGangPodGroup(job, job.status.attempt); !r.done()) return r;
    }
  }
  memory_.ChildrenEnsured(key, job.uid, children.change);
  return ReconcileResult::Done();
}

bool Reconciler::ChildMissing(const api::NcclJob& job) const {
  auto missing = [&](const kube::Store* cache, const std::string& name) {
    if (cache == nullptr) return false;
    kube::ObjectPtr cached = cache->Get(job.namespace_, name);
    return !cached || !observed::OwnedBy(*cached, job.uid);
  };
  return (desired::UsesJobServiceAccount(job) && missing(caches_.service_accounts, contract::ServiceAccountName(job.name))) ||
         missing(caches_.roles, contract::RoleName(job.name)) ||
         missing(caches_.role_bindings, contract::RoleName(job.name)) ||
         missing(caches_.services, contract::ServiceName(job.name)) ||
         EnvConfigMapNotTheJobs(job) ||
         (job.spec.compute_domain.requested && missing(caches_.compute_domains, contract::ComputeDomainName(job.name))) ||
         (UsesGang(job) && missing(caches_.gang_workloads, contract::GangWorkloadName(job.name))) ||
         (UsesGang(job) && CurrentGangPodGroupMissing(job));
}

bool Reconciler::EnvConfigMapNotTheJobs(const api::NcclJob& job) const {
  if (caches_.configmaps == nullptr) return false;
  const Json desired = desired::EnvConfigMap(job);
  kube::ObjectPtr cached = caches_.configmaps->Get(job.namespace_, desired["metadata"]["name"].get<std::string>());
  // Gone, or replaced by one of other data (it is immutable: only a delete and create change it).
  return !cached || !observed::OwnedBy(*cached, job.uid) || !cached->value("immutable", false) ||
         cached->value("data", Json()) != desired["data"];
}

bool Reconciler::CurrentGangPodGroupMissing(const api::NcclJob& job) const {
  // A running attempt's group, deleted by hand (pods still waiting for it would never be scheduled).
  if (caches_.gang_podgroups == nullptr || job.status.attempt == 0 || job.status.Finished()) return false;
  kube::ObjectPtr cached = caches_.gang_podgroups->Get(job.namespace_, contract::GangPodGroupName(job.name, job.status.attempt));
  return !cached || !observed::OwnedBy(*cached, job.uid);
}

ReconcileResult Reconciler::WriteConfigMap(const JobObservation& seen, const policy::Plan& plan) {
  const api::NcclJob& job = seen.job;
  Json desired = desired::ConfigMap(job, plan.status.attempt, plan.publish);
  if (seen.configmap_object) return TakeOverConfigMap(job, *seen.configmap_object, desired);
  auto created = client_->Create(res::kConfigMaps, job.namespace_, desired);
  if (!created.status().IsAlreadyExists()) return ReconcileResult::From(created.status());
  // Ours and not yet cached: wait for the cache (writing now could undo a publish). Someone
  // else's (a deleted job's of the same name, or one without our label): take it over.
  auto fresh = client_->Get(res::kConfigMaps, job.namespace_, contract::ConfigMapName(job.name));
  if (!fresh.ok()) return ReconcileResult::Error(fresh.status());
  if (observed::ObserveConfigMapOf(*fresh, job.uid).exists) {
    return ReconcileResult::StaleCache("ConfigMap exists but is not in the cache yet");
  }
  return TakeOverConfigMap(job, *fresh, desired);
}

ReconcileResult Reconciler::TakeOverConfigMap(const api::NcclJob& job, const Json& current, const Json& desired) {
  if (api::BeingDeleted(current.value("metadata", Json::object()))) {
    return ReconcileResult::WaitingForLeftover("ConfigMap " + contract::ConfigMapName(job.name));
  }
  // Conditional on the cached resourceVersion: a publish never overwrites a newer attempt.
  Json updated = current;
  updated["data"] = desired["data"];
  // One left by a deleted job of the same name (orphaned, or not yet collected) becomes ours.
  updated["metadata"]["ownerReferences"] = desired["metadata"]["ownerReferences"];
  for (auto& [k, v] : desired["metadata"]["labels"].items()) updated["metadata"]["labels"][k] = v;
  auto result = client_->Update(res::kConfigMaps, job.namespace_, updated);
  return ReconcileResult::FromWriteOfCached(result.status(), "ConfigMap");
}

ReconcileResult Reconciler::WriteStatus(const JobObservation& seen, const policy::Plan& plan) {
  const api::NcclJob& job = seen.job;
  if (job.status.id_published_time.empty() && !plan.status.id_published_time.empty()) TestKillAfterIdWrite();
  Json updated = *seen.object;
  updated["status"] = api::StatusToJson(plan.status);
  auto result = client_->UpdateStatus(kNcclJobs, job.namespace_, updated);
  return ReconcileResult::FromWriteOfCached(result.status(), "NcclJob");
}

ReconcileResult Reconciler::JobStillCurrent(const api::NcclJob& job) {
  auto fresh = client_->Get(kNcclJobs, job.namespace_, job.name);
  if (!fresh.ok()) {
    return fresh.status().IsNotFound() ? ReconcileResult::StaleCache("NcclJob was deleted")
                                       : ReconcileResult::Error(fresh.status());
  }
  if ((*fresh)["metadata"].value("resourceVersion", "") != job.resource_version) {
    return ReconcileResult::StaleCache("NcclJob changed since it was cached");
  }
  return ReconcileResult::Done();
}

// Calls `call(i)` for i in [0, n), kPodCallsInFlight at a time, until one fails: a pod already
// gone (NotFound) is no failure. Returns the first failure.
template <typename Call>
static kube::Status EachPodCall(std::size_t n, Call call) {
  std::mutex mu;
  kube::Status first_error;  // guarded by mu
  InParallel(n, kPodCallsInFlight, [&](std::size_t i) {
    kube::Status s = call(i);
    if (s.ok() || s.IsNotFound()) return true;
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.ok()) first_error = s;
    return false;
  });
  return first_error;
}

kube::Status Reconciler::DeletePods(const api::NcclJob& job, const policy::Plan& plan) {
  return EachPodCall(plan.delete_pods.size(),
                     [&](std::size_t i) { return client_->Delete(res::kPods, job.namespace_, plan.delete_pods[i]); });
}

kube::Status Reconciler::MovePods(const api::NcclJob& job, const policy::Plan& plan) {
  const std::string attempt = std::to_string(plan.status.attempt);
  return EachPodCall(plan.move_pods.size(), [&](std::size_t i) {
    const policy::Plan::PodMove& move = plan.move_pods[i];
    // null removes the copy of the attempt label that pods made by earlier versions carry as an
    // annotation, which would otherwise keep the attempt they were made for.
    Json patch = {{"metadata",
                   {{"labels", {{std::string(contract::kLabelAttempt), attempt}}},
                    {"annotations",
                     {{std::string(contract::kLabelAttempt), nullptr},
                      {std::string(contract::kAnnotationRestartsBefore), std::to_string(move.restarts_before)}}}}}};
    return client_->Patch(res::kPods, job.namespace_, move.name, kube::PatchType::kMerge, patch).status();
  });
}

bool Reconciler::NodesRestartInPlace() {
  if (caches_.nodes == nullptr || in_place_refused_) return false;
  std::lock_guard<std::mutex> lock(nodes_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - nodes_read_at_ >= std::chrono::seconds(1)) {
    nodes_restart_in_place_ = observed::EveryNodeRestartsInPlace(caches_.nodes->List());
    nodes_read_at_ = now;
  }
  return nodes_restart_in_place_;
}

// Whether the API server kept the restart rules of a pod made to restart in place (it drops
// them where feature gate ContainerRestartRules is off).
bool KeptRestartRules(const Json& created) {
  const Json& spec = created.value("spec", Json::object());
  if (!spec.contains("initContainers") || !spec["initContainers"].is_array()) return false;
  for (const Json& c : spec["initContainers"]) {
    if (c.value("name", "") == contract::kSidecarContainerName) return c.contains("restartPolicyRules");
  }
  return false;
}

// What the API server warned of when it took the pods (a deprecated label or annotation, a
// field it dropped): the template's author should hear it, once per job rather than per pod or
// attempt, since every pod and attempt comes from the same template.
void Reconciler::ReportApiWarnings(const api::NcclJob& job, const std::vector<std::string>& warnings) {
  for (const std::string& text : warnings) {
    if (memory_.FirstApiWarning(job, text)) {
      events_.Record(job, {"Warning", "APIWarning", "the API server warned when the job's pods were created: " + text});
    }
  }
}

kube::Status Reconciler::CreatePods(const api::NcclJob& job, const policy::Plan& plan) {
  // Creates are independent and each is one round trip, so they overlap; the bound keeps the
  // API server's mutating in-flight limit and the client's idle connection pool in mind. The
  // attempt is already in status (plan.h's order), so any subset of these may land.
  const std::vector<int>& indices = plan.create_pods;
  if (indices.empty()) return kube::Status::Ok();
  auto flavors = kueue_.AdmittedFlavors(job);  // Kueue's placement, read when the pods are made (as Kueue does)
  if (!flavors.ok()) return flavors.status();
  const bool by_topology = kueue_.AdmittedWithTopology(job);  // Kueue's TopologyUngater places each pod
  const bool gang = UsesGang(job);
  std::mutex mu;
  std::vector<policy::FailedCreate> failures;  // in the order they happened; guarded by mu
  std::vector<std::string> warnings;            // the API server's, each text once; guarded by mu
  std::atomic<bool> rules_dropped = false;
  const bool auto_strategy = job.spec.failure_policy.restart_strategy == api::RestartStrategy::kAuto;
  InParallel(indices.size(), kPodCallsInFlight, [&](std::size_t i) {
    const int index = indices[i];
    Json pod = desired::Pod(job, index, plan.status.attempt, pod_options_, plan.create_in_place);
    if (gang) desired::JoinGang(caches_.gang_api, pod, job, plan.status.attempt);
    desired::ApplyFlavors(pod, *flavors);
    if (by_topology) desired::GateForTopology(pod, job);
    std::vector<std::string> warned;
    auto created = client_->Create(res::kPods, job.namespace_, pod, kube::CallOptions{.warnings = &warned});
    if (!warned.empty()) {
      std::lock_guard<std::mutex> lock(mu);
      for (std::string& text : warned) {
        if (std::find(warnings.begin(), warnings.end(), text) == warnings.end()) warnings.push_back(std::move(text));
      }
    }
    if (created.ok() && plan.create_in_place && !KeptRestartRules(*created)) {
      // Its sidecar would leave for the next attempt without its trainer: the pod must go.
      rules_dropped = true;
      (void)client_->Delete(res::kPods, job.namespace_, pod["metadata"]["name"].get<std::string>());
      return false;
    }
    if (!created.ok() && plan.create_in_place && auto_strategy && created.status().IsInvalid() &&
        created.status().message().find("restartPolicyRules") != std::string::npos) {
      // Refused rather than dropped (gate RestartAllContainersOnContainerExits off). A job that
      // asked for InPlace itself fails below with the API server's own words, as any refused pod.
      rules_dropped = true;
      return false;
    }
    if (created.ok() || created.status().IsAlreadyExists()) return true;
    std::lock_guard<std::mutex> lock(mu);
    failures.push_back({index, created.status()});
    return !policy::IsRefusal(created.status());  // every other pod would be refused the same way: stop
  });
  ReportApiWarnings(job, warnings);
  if (rules_dropped && auto_strategy) {
    // Auto asked for it because the nodes declare the feature; the API server does not serve it.
    if (!in_place_refused_.exchange(true)) {
      logging::Warn("controller",
                    "the API server refuses or drops container restartPolicyRules although the nodes declare "
                    "RestartAllContainersOnContainerExits: restartStrategy Auto recreates pods from now on",
                    {{"job", observed::JobKey(job.namespace_, job.name)}});
    }
    return kube::Status::Local("RestartInPlaceRefused", "the API server refused the restart rules: the pods are made again without them");
  }
  if (rules_dropped) {
    memory_.RememberVerdict(
        job, policy::PodCreateVerdict{"RestartInPlaceNotServed",
                                      "the API server dropped the pods' container restartPolicyRules (feature gate "
                                      "ContainerRestartRules is off), so they cannot restart in place; set "
                                      "spec.failurePolicy.restartStrategy: Recreate"});
    return kube::Status::Ok();
  }
  const policy::CreateSummary summary = policy::SummarizeCreates(failures);
  const std::string key = observed::JobKey(job.namespace_, job.name);
  if (!summary.refused) {
    memory_.PodsLetIn(key);  // a later refusal starts a new clock
  } else {
    // Malformed (policy/pod_refusal.h): the template is wrong for good: remember it so the
    // next reconcile fails the job. Forbidden (a quota, Pod Security, a missing
    // ServiceAccount) may pass: retried for failurePolicy.forbiddenRetrySeconds, then the job
    // fails. Anything else (a webhook's answer) may pass: retried.
    const auto& [index, status] = *summary.refused;
    const std::string what = policy::RefusalMessage(contract::PodName(job.name, index), status);
    const int limit = job.spec.failure_policy.forbidden_retry_seconds;
    const std::chrono::seconds refused_for =
        status.IsForbidden() ? memory_.ForbiddenFor(job, plan.status.attempt) : std::chrono::seconds(0);
    if (policy::IsMalformedPod(status)) {
      memory_.RememberVerdict(job, policy::TemplateRejected(what));
    } else if (status.IsForbidden() && refused_for.count() >= limit) {
      memory_.RememberVerdict(job, policy::ForbiddenTooLong(what, static_cast<int>(refused_for.count())));
    } else {
      events_.Record(job, {"Warning", "PodCreateFailed", what + " (will retry)"});
    }
  }
  if (summary.errors > 1) {
    logging::Warn("controller", "some pods could not be created; will retry",
                  {{"job", key}, {"failed", std::to_string(summary.errors)}, {"of", std::to_string(indices.size())}});
  }
  return summary.first_error;
}

}  // namespace ncclop::controller
