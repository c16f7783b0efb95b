#include "controller/observe.h"

#include "contract/names.h"
#include "logging/log.h"
#include "observed/ownership.h"

namespace ncclop::controller {

std::optional<JobObservation> ObserveJob(const Caches& caches, const std::string& key) {
  JobObservation out;
  out.object = caches.jobs->Get(key);
  if (!out.object) return std::nullopt;
  auto parsed = api::ParseNcclJob(*out.object);
  if (!parsed.ok()) {
    logging::Warn("controller", "ignoring an NcclJob without usable metadata", {{"key", key}});
    return std::nullopt;
  }
  out.job = std::move(*parsed);
  const api::NcclJob& job = out.job;
  const std::string job_key = observed::JobKey(job.namespace_, job.name);
  const std::vector<kube::ObjectPtr> cached = caches.pods->ByIndex(kPodsByJob, job_key);
  if (caches.pod_memo != nullptr) {
    out.pods = caches.pod_memo->ObserveOwned(job_key, job.uid, job.spec.trainer_container, cached);
  } else {
    for (const kube::ObjectPtr& pod : cached) {
      if (observed::OwnedBy(*pod, job.uid)) out.pods.push_back(observed::ObservePod(*pod, job.spec.trainer_container));
    }
  }
  out.configmap_object = caches.configmaps->Get(job.namespace_, contract::ConfigMapName(job.name));
  if (out.configmap_object) out.configmap = observed::ObserveConfigMapOf(*out.configmap_object, job.uid);
  return out;
}

}  // namespace ncclop::controller
