// The gang scheduler's objects of a gang-scheduled job (desired/gang_workload.h), in the version the
// API server serves: the Workload, made with the job's other children before any pod of it exists,
// and on 1.36+ one PodGroup per attempt, made just before the attempt's pods (the scheduler holds
// a pod whose group does not exist yet). Each is made again when gone from its cache (deleted by
// hand: its delete event queues the job, Reconciler::ChildMissing). A leftover of a deleted job of
// the same name is taken over when it fits, else deleted and made again (gangs are immutable).
// The PodGroups of earlier attempts are deleted once a new attempt's exists; each goes once its
// pods are gone (the API server's pod group protection finalizer).
#include "contract/names.h"
#include "controller/reconciler.h"
#include "desired/gang_workload.h"
#include "logging/log.h"
#include "observed/ownership.h"

namespace ncclop::controller {

using Json = nlohmann::json;

bool Reconciler::UsesGang(const api::NcclJob& job) const {
  return desired::UsesGangScheduling(job, caches_.gang_api);
}

ReconcileResult Reconciler::EnsureGangWorkload(const api::NcclJob& job) {
  return CreateOrAdoptGangObject(
      job, {.resource = GangWorkloads(caches_.gang_api),
            .what = "Workload",
            .desired = desired::GangWorkload(caches_.gang_api, job),
            .fits = [&](const Json& existing) { return desired::GangWorkloadFits(caches_.gang_api, existing, job); },
            .kept = [&](const Json& created) {
              if (desired::GangWorkloadKeptConstraints(caches_.gang_api, created, job)) return true;
              // The gate is off: the pods would be placed without the constraint the job asks for.
              memory_.RememberVerdict(
                  job, policy::PodCreateVerdict{
                           "GangTopologyNotServed",
                           "the API server dropped the gang's topology constraint (spec.gangTopologyKey " +
                               job.spec.gang_topology_key +
                               "): feature gate TopologyAwareWorkloadScheduling is off on kube-apiserver (kube-scheduler "
                               "needs it too); turn it on there, or remove spec.gangTopologyKey"});
              return false;
            }});
}

ReconcileResult Reconciler::EnsureGangPodGroup(const api::NcclJob& job, int attempt) {
  return CreateOrAdoptGangObject(job, {.resource = GangPodGroups(caches_.gang_api),
                                       .what = "PodGroup",
                                       .desired = desired::GangPodGroup(caches_.gang_api, job, attempt),
                                       .fits = [&](const Json& existing) {
                                         return desired::GangPodGroupFits(caches_.gang_api, existing, job);
                                       }});
}

ReconcileResult Reconciler::CreateOrAdoptGangObject(const api::NcclJob& job, const GangObject& object) {
  const std::string name = object.desired["metadata"].value("name", "");
  const std::string leftover = object.what + " " + name;
  const std::string job_key = observed::JobKey(job.namespace_, job.name);
  auto created = client_->Create(object.resource, job.namespace_, object.desired);
  if (created.ok()) {
    logging::Info("controller", "created the gang scheduling " + object.what,
                  {{"job", job_key}, {"name", name}, {"minCount", std::to_string(job.spec.replicas)}});
    // Not kept: the verdict is remembered; decide again (the job fails) before any pod is made.
    if (object.kept && !object.kept(*created)) return ReconcileResult::RequeueAfter(std::chrono::seconds(0));
  }
  if (created.ok() || !created.status().IsAlreadyExists()) return ReconcileResult::From(created.status());
  auto existing = client_->Get(object.resource, job.namespace_, name);
  if (!existing.ok()) return ReconcileResult::Error(existing.status());
  const Json meta = existing->value("metadata", Json::object());
  const bool ours = observed::OwnedBy(*existing, job.uid);
  if (api::BeingDeleted(meta)) {
    // Ours: deleted by hand while its pods keep it (a PodGroup's protection finalizer); those pods
    // are already in it, and it goes with them. Another job's: wait until it is gone.
    return ours ? ReconcileResult::Done() : ReconcileResult::WaitingForLeftover(leftover);
  }
  const bool fits = object.fits(*existing);
  if (fits && ours) return ReconcileResult::Done();
  if (fits) {
    Json patch = {{"metadata", {{"ownerReferences", object.desired["metadata"]["ownerReferences"]}}}};
    if (object.desired["metadata"].contains("labels")) patch["metadata"]["labels"] = object.desired["metadata"]["labels"];
    return ReconcileResult::From(
        client_->Patch(object.resource, job.namespace_, name, kube::PatchType::kMerge, patch).status());
  }
  kube::DeleteOptions options;
  options.precondition_uid = meta.value("uid", "");
  kube::Status deleted = client_->Delete(object.resource, job.namespace_, name, options);
  if (!deleted.ok() && !deleted.IsNotFound()) return ReconcileResult::Error(deleted);
  logging::Info("controller", "deleted a gang scheduling " + object.what + " of another shape left by a deleted job of the same name",
                {{"job", job_key}, {"name", name}});
  return ReconcileResult::WaitingForLeftover(leftover, "of another gang is being replaced");
}

kube::Status Reconciler::DeleteEarlierGangPodGroups(const api::NcclJob& job, int attempt) {
  if (caches_.gang_podgroups == nullptr) return kube::Status::Ok();
  const std::string current = contract::GangPodGroupName(job.name, attempt);
  const std::string job_key = observed::JobKey(job.namespace_, job.name);
  for (const kube::ObjectPtr& group : caches_.gang_podgroups->ByIndex(kPodsByJob, job_key)) {
    const Json meta = group->value("metadata", Json::object());
    if (meta.value("name", "") == current || !observed::OwnedBy(*group, job.uid) || api::BeingDeleted(meta)) {
      continue;
    }
    kube::DeleteOptions options;
    options.precondition_uid = meta.value("uid", "");
    kube::Status s = client_->Delete(GangPodGroups(caches_.gang_api), job.namespace_, meta.value("name", ""), options);
    if (!s.ok() && !s.IsNotFound() && !s.IsConflict()) return s;
  }
  return kube::Status::Ok();
}

}  // namespace ncclop::controller
