#include "desired/gang_workload.h"

#include "contract/names.h"

namespace ncclop::desired {

bool UsesGangScheduling(const api::NcclJob& job, bool served) {
  switch (job.spec.gang_scheduling) {
    case api::GangScheduling::kAuto: return served;
    case api::GangScheduling::kRequired: return true;
    case api::GangScheduling::kDisabled: return false;
  }
  return false;
}

namespace {

Json PodGroups(const api::NcclJob& job) {
  return Json::array({{{"name", contract::kGangPodGroup}, {"policy", {{"gang", {{"minCount", job.spec.replicas}}}}}}});
}

}  // namespace

Json GangWorkload(const api::NcclJob& job) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha1"},
          {"kind", "Workload"},
          {"metadata", ObjectMetadata(job, contract::GangWorkloadName(job.name))},
          {"spec",
           {{"controllerRef", {{"apiGroup", contract::kGroup}, {"kind", contract::kKind}, {"name", job.name}}},
            {"podGroups", PodGroups(job)}}}};
}

bool GangWorkloadFits(const Json& existing, const api::NcclJob& job) {
  const Json spec = existing.value("spec", Json::object());
  const Json groups = spec.is_object() ? spec.value("podGroups", Json()) : Json();
  if (!groups.is_array() || groups.size() != 1 || !groups[0].is_object()) return false;
  const Json& group = groups[0];
  const Json min_count = group.value("policy", Json::object()).value("gang", Json::object()).value("minCount", Json());
  return group.value("name", "") == contract::kGangPodGroup && min_count.is_number_integer() &&
         min_count.get<int>() == job.spec.replicas;
}

void ReferenceGangWorkload(Json& pod, const api::NcclJob& job, int attempt) {
  pod["spec"]["workloadRef"] = {{"name", contract::GangWorkloadName(job.name)},
                                {"podGroup", contract::kGangPodGroup},
                                {"podGroupReplicaKey", contract::GangReplicaKey(attempt)}};
}

}  // namespace ncclop::desired
