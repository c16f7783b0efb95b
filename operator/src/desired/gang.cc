#include "desired/gang.h"

#include "api/names.h"

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
  return Json::array({{{"name", api::kGangPodGroup}, {"policy", {{"gang", {{"minCount", job.spec.replicas}}}}}}});
}

}  // namespace

Json SchedulingWorkload(const api::NcclJob& job) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha1"},
          {"kind", "Workload"},
          {"metadata", ObjectMetadata(job, api::SchedulingWorkloadName(job.name))},
          {"spec",
           {{"controllerRef", {{"apiGroup", api::kGroup}, {"kind", api::kKind}, {"name", job.name}}},
            {"podGroups", PodGroups(job)}}}};
}

bool SchedulingWorkloadFits(const Json& existing, const api::NcclJob& job) {
  const Json spec = existing.value("spec", Json::object());
  const Json groups = spec.is_object() ? spec.value("podGroups", Json()) : Json();
  if (!groups.is_array() || groups.size() != 1 || !groups[0].is_object()) return false;
  const Json& group = groups[0];
  const Json min_count = group.value("policy", Json::object()).value("gang", Json::object()).value("minCount", Json());
  return group.value("name", "") == api::kGangPodGroup && min_count.is_number_integer() &&
         min_count.get<int>() == job.spec.replicas;
}

void ReferenceSchedulingWorkload(Json& pod, const api::NcclJob& job, int attempt) {
  pod["spec"]["workloadRef"] = {{"name", api::SchedulingWorkloadName(job.name)},
                                {"podGroup", api::kGangPodGroup},
                                {"podGroupReplicaKey", api::GangReplicaKey(attempt)}};
}

}  // namespace ncclop::desired
