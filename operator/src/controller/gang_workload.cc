// The scheduling.k8s.io Workload of a gang-scheduled job (desired/gang_workload.h): made with the job's
// other children, before any pod of it exists, and made again with them when it is gone from the
// cache (deleted by hand: its delete event queues the job, Reconciler::ChildMissing); a leftover of a deleted job of the same
// name is taken over when its pod group fits, else deleted and made again (pod groups are immutable).
#include "contract/names.h"
#include "controller/reconciler.h"
#include "desired/gang_workload.h"
#include "logging/log.h"
#include "observed/ownership.h"

namespace ncclop::controller {

using Json = nlohmann::json;

bool Reconciler::UsesGang(const api::NcclJob& job) const {
  return desired::UsesGangScheduling(job, caches_.GangWorkloadsServed());
}

ReconcileResult Reconciler::EnsureGangWorkload(const api::NcclJob& job) {
  const std::string name = contract::GangWorkloadName(job.name);
  const Json desired = desired::GangWorkload(job);
  auto created = client_->Create(kGangWorkloads, job.namespace_, desired);
  if (created.ok()) {
    logging::Info("controller", "created the gang scheduling Workload",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"minCount", std::to_string(job.spec.replicas)}});
  }
  if (created.ok() || !created.status().IsAlreadyExists()) return ReconcileResult::From(created.status());
  auto existing = client_->Get(kGangWorkloads, job.namespace_, name);
  if (!existing.ok()) return ReconcileResult::Error(existing.status());
  const Json meta = existing->value("metadata", Json::object());
  const std::string leftover = "Workload " + name;
  if (api::BeingDeleted(meta)) return ReconcileResult::WaitingForLeftover(leftover);
  const bool fits = desired::GangWorkloadFits(*existing, job);
  if (fits && observed::OwnedBy(*existing, job.uid)) return ReconcileResult::Done();
  if (fits) {
    Json patch = {{"metadata", {{"ownerReferences", desired["metadata"]["ownerReferences"]}}}};
    return ReconcileResult::From(
        client_->Patch(kGangWorkloads, job.namespace_, name, kube::PatchType::kMerge, patch).status());
  }
  kube::DeleteOptions options;
  options.precondition_uid = meta.value("uid", "");
  kube::Status deleted = client_->Delete(kGangWorkloads, job.namespace_, name, options);
  if (!deleted.ok() && !deleted.IsNotFound()) return ReconcileResult::Error(deleted);
  logging::Info("controller", "deleted a gang scheduling Workload of another shape left by a deleted job of the same name",
                {{"job", observed::JobKey(job.namespace_, job.name)}});
  return ReconcileResult::WaitingForLeftover(leftover, "of another pod group shape is being replaced");
}

}  // namespace ncclop::controller
