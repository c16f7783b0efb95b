// The Kueue Workload of a job in a queue (desired/kueue_workload.h, observed/kueue_workload.h,
// policy/admission.h): created once, with the priority of its class
// (desired/kueue_workload_priority.h: read then, and again when the job's priority-class label names
// another WorkloadPriorityClass); marked Finished when the job ends so Kueue releases its quota;
// after an eviction, its quota reservation is cleared once the job's pods are gone, so Kueue
// queues it again.
#include "contract/names.h"
#include "api/time.h"
#include "controller/reconciler.h"
#include "desired/kueue_workload.h"
#include "desired/kueue_workload_priority.h"
#include "logging/log.h"
#include "observed/ownership.h"
#include "observed/kueue_workload.h"

namespace ncclop::controller {

using Json = nlohmann::json;

namespace {

// The local status reason of a priority class that does not exist (ReadWorkloadPriority).
constexpr const char* kPriorityClassNotFound = "PriorityClassNotFound";

}  // namespace

observed::ObservedKueueWorkload Reconciler::ObserveKueueWorkload(const api::NcclJob& job) const {
  if (job.queue_name.empty() || caches_.kueue_workloads == nullptr) return {};
  kube::ObjectPtr cached = caches_.kueue_workloads->Get(job.namespace_, contract::KueueWorkloadName(job.name));
  // One left by a deleted job of the same name is not this job's admission.
  if (!cached || !observed::OwnedBy(*cached, job.uid)) return {};
  return observed::ObserveKueueWorkload(*cached);
}

std::optional<ReconcileResult> Reconciler::EnsureWorkloadStep(const api::NcclJob& job) {
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

kube::Result<desired::KueueWorkloadPriority> Reconciler::ReadWorkloadPriority(const desired::PriorityClassToRead& what) const {
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

kube::Status Reconciler::FollowPriorityLabel(const api::NcclJob& job, const Json& workload) {
  if (!observed::OwnedBy(workload, job.uid)) return kube::Status::Ok();
  auto follow = desired::WorkloadPriorityClassToFollow(job, workload, observed::ObserveKueueWorkload(workload).quota_reserved);
  if (!follow) return kube::Status::Ok();
  const desired::PriorityClassToRead what{desired::PriorityClassToRead::Kind::kWorkloadPriorityClass, *follow};
  auto priority = ReadWorkloadPriority(what);
  if (priority.status().reason() == kPriorityClassNotFound) {
    return kube::Status::Local(kPriorityClassNotFound, priority.status().message() + ": the Workload keeps its priority until it does");
  }
  if (!priority.ok()) return priority.status();
  auto patched = client_->Patch(kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name), kube::PatchType::kMerge,
                                desired::SetPriorityPatch(workload, *priority));
  if (patched.ok()) {
    logging::Info("controller", "the Kueue Workload follows the job's priority-class label",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"workloadPriorityClass", *follow},
                   {"priority", std::to_string(priority->priority)}});
  }
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a conflict (the cache was behind) is retried with backoff
}

kube::Status Reconciler::EnsureWorkload(const api::NcclJob& job) {
  if (kube::ObjectPtr cached = caches_.kueue_workloads->Get(job.namespace_, contract::KueueWorkloadName(job.name))) {
    return FollowPriorityLabel(job, *cached);
  }
  Json workload = desired::KueueWorkload(job, pod_options_);
  auto priority = ReadWorkloadPriority(desired::PriorityClassOf(job));
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

kube::Status Reconciler::FinishWorkload(const api::NcclJob& job, const policy::Plan::KueueWorkloadFinish& finish) {
  kube::ObjectPtr cached = caches_.kueue_workloads->Get(job.namespace_, contract::KueueWorkloadName(job.name));
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
  auto patched = client_->Patch(kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name), kube::PatchType::kJson, patch, options);
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a failed test (the cache was behind) is retried with backoff
}

kube::Status Reconciler::ReleaseWorkloadQuota(const api::NcclJob& job) {
  kube::ObjectPtr cached = caches_.kueue_workloads->Get(job.namespace_, contract::KueueWorkloadName(job.name));
  if (!cached) return kube::Status::Ok();
  kube::PatchOptions options;
  options.subresource = "status";
  auto patched = client_->Patch(kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name), kube::PatchType::kJson,
                                desired::ReleaseQuotaPatch(*cached, api::Clock::now()), options);
  if (patched.ok()) {
    logging::Info("controller", "cleared the quota reservation of the evicted Kueue Workload: the job's pods are gone",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"queue", job.queue_name}});
  }
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a failed test (the cache was behind) is retried with backoff
}

kube::Status Reconciler::SetWorkloadActive(const api::NcclJob& job, bool active) {
  kube::ObjectPtr cached = caches_.kueue_workloads->Get(job.namespace_, contract::KueueWorkloadName(job.name));
  if (!cached) return kube::Status::Ok();
  auto patched = client_->Patch(kKueueWorkloads, job.namespace_, contract::KueueWorkloadName(job.name), kube::PatchType::kMerge,
                                desired::SetActivePatch(*cached, active));
  if (patched.ok()) {
    logging::Info("controller", active ? "activated the Kueue Workload again: the job was resumed"
                                       : "deactivated the Kueue Workload: the job is suspended, its admission is given back",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"queue", job.queue_name}});
  }
  if (patched.ok() || patched.status().IsNotFound()) return kube::Status::Ok();
  return patched.status();  // a conflict (the cache was behind) is retried with backoff
}

kube::Status Reconciler::SetWorkloadPodsReady(const api::NcclJob& job, const policy::KueuePodsReady& pods_ready) {
  kube::ObjectPtr cached = caches_.kueue_workloads->Get(job.namespace_, contract::KueueWorkloadName(job.name));
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

kube::Result<std::vector<Json>> Reconciler::AdmittedFlavors(const api::NcclJob& job) const {
  std::vector<Json> flavors;
  if (job.queue_name.empty()) return flavors;
  for (const std::string& name : ObserveKueueWorkload(job).flavors) {
    auto flavor = client_->Get(kKueueResourceFlavors, "", name);
    if (!flavor.ok()) return flavor.status();
    flavors.push_back(std::move(*flavor));
  }
  return flavors;
}

}  // namespace ncclop::controller
