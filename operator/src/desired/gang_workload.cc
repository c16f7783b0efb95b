#include "desired/gang_workload.h"

#include "contract/names.h"

namespace ncclop::desired {

std::string_view GangApiVersion(GangApi api) {
  switch (api) {
    case GangApi::kNone: return "";
    case GangApi::kV1alpha1: return "v1alpha1";
    case GangApi::kV1alpha2: return "v1alpha2";
    case GangApi::kV1beta1: return "v1beta1";
  }
  return "";
}

bool GangHasPodGroups(GangApi api) { return api == GangApi::kV1alpha2 || api == GangApi::kV1beta1; }

bool UsesGangScheduling(const api::NcclJob& job, GangApi served) {
  switch (job.spec.gang_scheduling) {
    case api::GangScheduling::kAuto: return served != GangApi::kNone;
    case api::GangScheduling::kRequired: return true;
    case api::GangScheduling::kDisabled: return false;
  }
  return false;
}

namespace {

std::string ApiVersion(GangApi api) { return "scheduling.k8s.io/" + std::string(GangApiVersion(api)); }

Json Gang(const api::NcclJob& job) { return {{"gang", {{"minCount", job.spec.replicas}}}}; }

// The Workload's field of its groups, and a group's field of its policy: v1alpha1's pod groups,
// later versions' pod group templates.
const char* GroupsField(GangApi api) { return api == GangApi::kV1alpha1 ? "podGroups" : "podGroupTemplates"; }
const char* PolicyField(GangApi api) { return api == GangApi::kV1alpha1 ? "policy" : "schedulingPolicy"; }

// spec.gangTopologyKey as a PodGroup's (or template's) schedulingConstraints; null when unset or
// where the version has no PodGroups.
Json Constraints(GangApi api, const api::NcclJob& job) {
  if (job.spec.gang_topology_key.empty() || !GangHasPodGroups(api)) return Json();
  return {{"topology", Json::array({{{"key", job.spec.gang_topology_key}}})}};
}

// The one pod group (v1alpha1) or pod group template (later versions) of the job's Workload.
Json Group(GangApi api, const api::NcclJob& job) {
  Json group = {{"name", contract::kGangPodGroup}, {PolicyField(api), Gang(job)}};
  if (Json constraints = Constraints(api, job); !constraints.is_null()) group["schedulingConstraints"] = constraints;
  return group;
}

// A group's or PodGroup spec's schedulingConstraints as the job wants them (absent for none).
bool ConstraintsFit(GangApi api, const Json& holder, const api::NcclJob& job) {
  const Json constraints = holder.is_object() ? holder.value("schedulingConstraints", Json()) : Json();
  const Json want = Constraints(api, job);
  const bool none = constraints.is_null() || constraints == Json::object();
  return want.is_null() ? none : constraints == want;
}

// minCount of a policy ({gang: {minCount}}), or -1 when it is not a gang.
int MinCount(const Json& policy) {
  if (!policy.is_object()) return -1;
  const Json gang = policy.value("gang", Json());
  if (!gang.is_object() || policy.size() != 1) return -1;
  const Json count = gang.value("minCount", Json());
  return count.is_number_integer() ? count.get<int>() : -1;
}

Json Spec(const Json& object) {
  const Json spec = object.is_object() ? object.value("spec", Json::object()) : Json::object();
  return spec.is_object() ? spec : Json::object();
}

// The template a PodGroup names: {workload name, template name}.
std::pair<std::string, std::string> TemplateRef(GangApi api, const Json& spec) {
  auto text = [](const Json& o, const char* key) {
    const Json v = o.is_object() ? o.value(key, Json()) : Json();
    return v.is_string() ? v.get<std::string>() : std::string();
  };
  if (api == GangApi::kV1alpha2) {
    const Json ref = spec.value("podGroupTemplateRef", Json::object());
    const Json workload = ref.is_object() ? ref.value("workload", Json::object()) : Json::object();
    return {text(workload, "workloadName"), text(workload, "podGroupTemplateName")};
  }
  const Json ref = spec.value("workloadRef", Json::object());
  return {text(ref, "workloadName"), text(ref, "templateName")};
}

}  // namespace

Json GangWorkload(GangApi api, const api::NcclJob& job) {
  return {{"apiVersion", ApiVersion(api)},
          {"kind", "Workload"},
          {"metadata", ObjectMetadata(job, contract::GangWorkloadName(job.name))},
          {"spec",
           {{"controllerRef", {{"apiGroup", contract::kGroup}, {"kind", contract::kKind}, {"name", job.name}}},
            {GroupsField(api), Json::array({Group(api, job)})}}}};
}

bool GangWorkloadFits(GangApi api, const Json& existing, const api::NcclJob& job) {
  const Json groups = Spec(existing).value(GroupsField(api), Json());
  if (!groups.is_array() || groups.size() != 1 || !groups[0].is_object()) return false;
  const Json& group = groups[0];
  const Json policy = group.value(PolicyField(api), Json());
  return group.value("name", "") == contract::kGangPodGroup && MinCount(policy) == job.spec.replicas &&
         ConstraintsFit(api, group, job);
}

bool GangWorkloadKeptConstraints(GangApi api, const Json& workload, const api::NcclJob& job) {
  if (Constraints(api, job).is_null()) return true;
  const Json groups = Spec(workload).value(GroupsField(api), Json());
  return groups.is_array() && groups.size() == 1 && ConstraintsFit(api, groups[0], job);
}

Json GangPodGroup(GangApi api, const api::NcclJob& job, int attempt) {
  Json metadata = ObjectMetadata(job, contract::GangPodGroupName(job.name, attempt));
  metadata["labels"][std::string(contract::kLabelAttempt)] = std::to_string(attempt);
  const std::string workload = contract::GangWorkloadName(job.name);
  Json spec = {{"schedulingPolicy", Gang(job)}};
  if (Json constraints = Constraints(api, job); !constraints.is_null()) spec["schedulingConstraints"] = constraints;
  if (api == GangApi::kV1alpha2) {
    spec["podGroupTemplateRef"] = {
        {"workload", {{"workloadName", workload}, {"podGroupTemplateName", contract::kGangPodGroup}}}};
  } else {
    spec["workloadRef"] = {{"workloadName", workload}, {"templateName", contract::kGangPodGroup}};
  }
  return {{"apiVersion", ApiVersion(api)}, {"kind", "PodGroup"}, {"metadata", std::move(metadata)}, {"spec", spec}};
}

bool GangPodGroupFits(GangApi api, const Json& existing, const api::NcclJob& job) {
  const Json spec = Spec(existing);
  const auto [workload, template_name] = TemplateRef(api, spec);
  return workload == contract::GangWorkloadName(job.name) && template_name == contract::kGangPodGroup &&
         MinCount(spec.value("schedulingPolicy", Json())) == job.spec.replicas && ConstraintsFit(api, spec, job);
}

void JoinGang(GangApi api, Json& pod, const api::NcclJob& job, int attempt) {
  if (api == GangApi::kV1alpha1) {
    pod["spec"]["workloadRef"] = {{"name", contract::GangWorkloadName(job.name)},
                                  {"podGroup", contract::kGangPodGroup},
                                  {"podGroupReplicaKey", contract::GangReplicaKey(attempt)}};
    return;
  }
  pod["spec"]["schedulingGroup"] = {{"podGroupName", contract::GangPodGroupName(job.name, attempt)}};
}

}  // namespace ncclop::desired
