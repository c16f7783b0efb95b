#include "controller/kueue_workload.h"

#include "api/nccl_job.h"
#include "api/time.h"
#include "contract/names.h"
#include "controller/observe.h"
#include "desired/kueue_workload.h"
#include "logging/log.h"
#include "observed/ownership.h"

namespace ncclop::controller {

using Json = nlohmann::json;

namespace {

// The local status reason of a priority class that does not exist (ReadPriority).
constexpr const char* kPriorityClassNotFound = api::reason::kPriorityClassNotFound;

}  // namespace

KueueWorkloads::KueueWorkloads(std::shared_ptr<kube::Client> client, const kube::Store* cache,
                               desired::PodOptions pod_options, JobMemory& memory)
    : client_(std::move(client)), cache_(cache), pod_options_(std::move(pod_options)), memory_(memory) {}

void KueueWorkloads::IgnoreQueueUnlessServed(api::NcclJob& job) const {
  if (job.queue_name.empty() || cache_ != nullptr) return;
  logging::Warn("controller",
                "label kueue.x-k8s.io/queue-name ignored: the API server served no Kueue Workloads when the operator started",
                {{"job", observed::JobKey(job.namespace_, job.name)}, {"queue", job.queue_name}});
  job.queue_name.clear();
}

observed::ObservedKueueWorkload KueueWorkloads::Observe(const api::NcclJob& job) const {
  if (job.queue_name.empty() || cache_ == nullptr) return {};
  kube::ObjectPtr cached = cache_->Get(job.namespace_, contract::KueueWorkloadName(job.name));
  // One left by a deleted job of the same name is not this job's admission.
  if (!cached || !observed::OwnedBy(*cached, job.uid)) return {};
  return observed::ObserveKueueWorkload(*cached);
}

std::optional<ReconcileResult> KueueWorkloads::Ensure(const api::NcclJob& job) {
  const kube::Status ensured = EnsureWorkload(job);
  const bool missing = ensured.reason() == kPriorityClassNotFound;
  const std::string key = observed::JobKey(job.namespace_, job.name);
  bool changed = false;
  if (missing) {
    changed = memory_.PriorityClassMissing(job, ensured.message());
  } else if (ensured.ok()) {
    changed = memory_.PriorityClassFound(key);
  }
  // What Decide was told changed: decide again at once, before writing a status that says otherwise.
  if (changed) return ReconcileResult::RequeueAfter(std::chrono::seconds(0));
  if (missing) return std::nullopt;
  return ReconcileResult::From(ensured);
}

kube::Result<desired::KueueWorkloadPriority> KueueWorkloads::ReadPriority(
    const desired::PriorityClassToRead& what) const {
  using Kind = desired::PriorityClassToRead::Kind;
  std::vector<Json> classes;
  if (what.kind == Kind::kDefault) {
    auto listed = client_->List(kPriorityClasses, "");
    if (!listed.ok()) return listed.status();
    classes = std::move(listed->items);
  } else {
    const bool workload_class = what.kind == Kind::kWorkloadPriorityClass;
    auto got = client_->Get(workload_class ? kKueueWorkloadPriorityClasses : kPriorityClasses, "", what.name);
    if (got.status().IsNotFound()) {
      return kube::Status::Local(
          kPriorityClassNotFound,
          workload_class ? "WorkloadPriorityClass " + what.name + " (the job's label " +
                               std::string(contract::kLabelKueuePriorityClass) + ") does not exist"
                         : "PriorityClass " + what.name + " (the template's priorityClassName) does not exist");
    }
    if (!got.ok()) return got.status();
    classes.push_back(std::move(*got));
  }
  return desired::PriorityFrom(what, classes);
}

kube::Status KueueWorkloads::FollowPriorityLabel(const api::NcclJob& job, const Json& workload) {
  if (!observed::OwnedBy(workload, job.uid)) return kube::Status::Ok();
  const bool quota_reserved = observed::ObserveKueueWorkload(workload).quota_reserved;
  auto follow = desired::WorkloadPriorityClassToFollow(job, workload, quota_reserved);
  if (!follow) return kube::Status::Ok();
  const desired::PriorityClassToRead what{desired::PriorityClassToRead::Kind::kWorkloadPriorityClass, *follow};
  auto priority = ReadPriority(what);
  if (priority.status().reason() == kPriorityClassNotFound) {
    return kube::Status::Local(kPriorityClassNotFound, priority.status().message() + ": the Workload keeps its priority until it does");
  }
  if (!priority.ok()) return priority.status();
  auto patched = client_->Patch(kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name),
                                kube::PatchType::kMerge, desired::SetPriorityPatch(workload, *priority));
  if (patched.ok()) {
    logging::Info("controller", "the Kueue Workload follows the job's priority-class label",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"workloadPriorityClass", *follow},
                   {"priority", std::to_string(priority->priority)}});
  }
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a conflict (the cache was behind) is retried with backoff
}

kube::Status KueueWorkloads::EnsureWorkload(const api::NcclJob& job) {
  if (kube::ObjectPtr cached = cache_->Get(job.namespace_, contract::KueueWorkloadName(job.name))) {
    return FollowPriorityLabel(job, *cached);
  }
  Json workload = desired::KueueWorkload(job, pod_options_);
  auto priority = ReadPriority(desired::PriorityClassOf(job));
  if (priority.status().reason() == kPriorityClassNotFound) {
    return kube::Status::Local(kPriorityClassNotFound, priority.status().message() + ": no Workload, so no place in queue " +
                                                           job.queue_name + ", until it does");
  }
  if (!priority.ok()) return priority.status();
  desired::SetPriority(workload, *priority);
  auto created = client_->Create(kKueueWorkloads, job.namespace_, workload);
  if (created.ok()) {
    logging::Info("controller", "created the Kueue Workload",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"queue", job.queue_name},
                   {"priority", std::to_string(priority->priority)}});
  }
  if (created.ok() || created.status().IsAlreadyExists()) return kube::Status::Ok();
  return created.status();
}

kube::Status KueueWorkloads::Update(const api::NcclJob& job, const policy::Plan& plan) {
  if (plan.finish_kueue_workload) {
    if (kube::Status s = Finish(job, *plan.finish_kueue_workload); !s.ok()) return s;
  }
  if (plan.release_kueue_quota) {
    if (kube::Status s = ReleaseQuota(job); !s.ok()) return s;
  }
  if (plan.set_kueue_workload_active) {
    if (kube::Status s = SetActive(job, *plan.set_kueue_workload_active); !s.ok()) return s;
  }
  if (plan.set_kueue_pods_ready) {
    if (kube::Status s = SetPodsReady(job, *plan.set_kueue_pods_ready); !s.ok()) return s;
  }
  return kube::Status::Ok();
}

kube::Status KueueWorkloads::Finish(const api::NcclJob& job, const policy::Plan::KueueWorkloadFinish& finish) {
  kube::ObjectPtr cached = cache_->Get(job.namespace_, contract::KueueWorkloadName(job.name));
  if (!cached) return kube::Status::Ok();
  const Json condition = {{"type", "Finished"},
                          {"status", "True"},
                          {"reason", finish.reason},
                          {"message", finish.message.substr(0, 1024)},
                          {"lastTransitionTime", api::FormatTime(api::Clock::now())}};
  const Json status = (*cached).value("status", Json::object());
  const bool has_conditions = status.contains("conditions") && status["conditions"].is_array();
  Json patch = Json::array();
  patch.push_back({{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", (*cached)["metadata"].value("resourceVersion", "")}});
  if (!status.is_object() || status.empty()) patch.push_back({{"op", "add"}, {"path", "/status"}, {"value", Json::object()}});
  if (has_conditions) {
    patch.push_back({{"op", "add"}, {"path", "/status/conditions/-"}, {"value", condition}});
  } else {
    patch.push_back({{"op", "add"}, {"path", "/status/conditions"}, {"value", Json::array({condition})}});
  }
  kube::PatchOptions options;
  options.subresource = "status";
  auto patched = client_->Patch(kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name),
                                kube::PatchType::kJson, patch, options);
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a failed test (the cache was behind) is retried with backoff
}

kube::Status KueueWorkloads::ReleaseQuota(const api::NcclJob& job) {
  kube::ObjectPtr cached = cache_->Get(job.namespace_, contract::KueueWorkloadName(job.name));
  if (!cached) return kube::Status::Ok();
  kube::PatchOptions options;
  options.subresource = "status";
  auto patched = client_->Patch(kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name),
                                kube::PatchType::kJson, desired::ReleaseQuotaPatch(*cached, api::Clock::now()), options);
  if (patched.ok()) {
    logging::Info("controller", "cleared the quota reservation of the evicted Kueue Workload: the job's pods are gone",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"queue", job.queue_name}});
  }
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a failed test (the cache was behind) is retried with backoff
}

kube::Status KueueWorkloads::SetActive(const api::NcclJob& job, bool active) {
  kube::ObjectPtr cached = cache_->Get(job.namespace_, contract::KueueWorkloadName(job.name));
  if (!cached) return kube::Status::Ok();
  auto patched = client_->Patch(kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name),
                                kube::PatchType::kMerge, desired::SetActivePatch(*cached, active));
  if (patched.ok()) {
    logging::Info("controller", active ? "activated the Kueue Workload again: the job was resumed"
                                       : "deactivated the Kueue Workload: the job is suspended, its admission is given back",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"queue", job.queue_name}});
  }
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a conflict (the cache was behind) is retried with backoff
}

kube::Status KueueWorkloads::SetPodsReady(const api::NcclJob& job, const policy::KueuePodsReady& pods_ready) {
  kube::ObjectPtr cached = cache_->Get(job.namespace_, contract::KueueWorkloadName(job.name));
  if (!cached || !observed::OwnedBy(*cached, job.uid)) return kube::Status::Ok();
  kube::PatchOptions options;
  options.subresource = "status";
  auto patched = client_->Patch(
      kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name), kube::PatchType::kJson,
      desired::SetPodsReadyPatch(*cached, pods_ready.ready, pods_ready.reason, pods_ready.message, api::Clock::now()), options);
  if (patched.ok()) {
    logging::Info("controller", "set the Kueue Workload's PodsReady condition",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"status", pods_ready.ready ? "True" : "False"},
                   {"reason", pods_ready.reason}});
  }
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a failed test (the cache was behind) is retried with backoff
}

kube::Result<std::vector<Json>> KueueWorkloads::AdmittedFlavors(const api::NcclJob& job) const {
  std::vector<Json> flavors;
  if (job.queue_name.empty()) return flavors;
  for (const std::string& name : Observe(job).flavors) {
    auto flavor = client_->Get(kKueueResourceFlavors, "", name);
    if (!flavor.ok()) return flavor.status();
    flavors.push_back(std::move(*flavor));
  }
  return flavors;
}

}  // namespace ncclop::controller
