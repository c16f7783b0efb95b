#include "controller/observe.h"

#include "contract/names.h"
#include "logging/log.h"
#include "observed/ownership.h"

namespace ncclop::controller {

std::optional<JobObservation> ObserveJob(const Caches& caches, const std::string& key) {
  JobObservation out;
  out.object = caches.jobs->store().Get(key);
  if (!out.object) return std::nullopt;
  auto parsed = api::ParseNcclJob(*out.object);
  if (!parsed.ok()) {
    logging::Warn("controller", "ignoring an NcclJob without usable metadata", {{"key", key}});
    return std::nullopt;
  }
  out.job = std::move(*parsed);
  const api::NcclJob& job = out.job;
  for (const kube::ObjectPtr& pod : caches.pods->store().ByIndex(kPodsByJob, observed::JobKey(job.namespace_, job.name))) {
    if (observed::OwnedBy(*pod, job.uid)) out.pods.push_back(observed::ObservePod(*pod, job.spec.trainer_container));
  }
  out.configmap_object = caches.configmaps->store().Get(job.namespace_, contract::ConfigMapName(job.name));
  if (out.configmap_object) out.configmap = observed::ObserveConfigMapOf(*out.configmap_object, job.uid);
  return out;
}

}  // namespace ncclop::controller
