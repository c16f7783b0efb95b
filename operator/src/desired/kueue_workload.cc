#include "desired/kueue_workload.h"

#include <algorithm>
#include <chrono>

#include "contract/names.h"
#include "desired/kueue_topology.h"

namespace ncclop::desired {

Json KueueWorkload(const api::NcclJob& job, const PodOptions& options) {
  // Every pod of the job asks for the same resources; pod 0 of the current attempt stands for all.
  Json pod = Pod(job, 0, std::max(job.status.attempt, 1), options);
  Json labels = pod["metadata"].value("labels", Json::object());
  labels.erase(std::string(contract::kLabelIndex));
  labels.erase(std::string(contract::kLabelAttempt));
  Json metadata = ObjectMetadata(job, contract::KueueWorkloadName(job.name));
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Workload"},
          {"metadata", std::move(metadata)},
          {"spec",
           {{"queueName", job.queue_name},
            {"podSets", Json::array({{{"name", kKueuePodSetName},
                                      {"count", job.spec.replicas},
                                      {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod["spec"]}}},
                                      {"topologyRequest", KueueTopologyRequest(job.spec.kueue_topology)}}})}}}};
}

}  // namespace ncclop::desired

namespace ncclop::desired {
namespace {

std::string Field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Kubernetes condition semantics: lastTransitionTime moves only when the status changes.
void SetCondition(Json& conditions, const std::string& type, bool is_true, const std::string& reason,
                  const std::string& message, const Json& generation, api::Time now) {
  const std::string status = is_true ? "True" : "False";
  Json condition = {{"type", type}, {"status", status}, {"reason", reason}, {"message", message},
                    {"lastTransitionTime", api::FormatTime(now)}};
  if (generation.is_number_integer()) condition["observedGeneration"] = generation;
  for (Json& c : conditions) {
    if (!c.is_object() || Field(c, "type") != type) continue;
    if (Field(c, "status") == status && c.contains("lastTransitionTime")) condition["lastTransitionTime"] = c["lastTransitionTime"];
    c = condition;
    return;
  }
  conditions.push_back(condition);
}

const Json* FindCondition(const Json& conditions, const std::string& type) {
  for (const Json& c : conditions) {
    if (c.is_object() && Field(c, "type") == type) return &c;
  }
  return nullptr;
}

}  // namespace

Json ReleaseQuotaPatch(const Json& workload, api::Time now) {
  const Json metadata = workload.value("metadata", Json::object());
  const Json status = workload.value("status", Json::object());
  Json conditions = status.value("conditions", Json::array());
  if (!conditions.is_array()) conditions = Json::array();
  const Json generation = metadata.value("generation", Json());

  std::string eviction_reason = "Evicted", eviction_message = "the Workload was evicted";
  if (const Json* evicted = FindCondition(conditions, "Evicted")) {
    if (!Field(*evicted, "reason").empty()) eviction_reason = Field(*evicted, "reason");
    eviction_message = Field(*evicted, "message");
  }
  const bool requeue_now = eviction_reason == "Preempted" || eviction_reason == "NodeFailures";

  Json patch = Json::array();
  patch.push_back({{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", Field(metadata, "resourceVersion")}});
  if (const Json* admitted = FindCondition(conditions, "Admitted"); admitted && Field(*admitted, "status") == "True") {
    if (auto since = api::ParseTime(Field(*admitted, "lastTransitionTime")); since && *since <= now) {
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - *since).count();
      auto past = status.find("accumulatedPastExecutionTimeSeconds");
      const long long before = past != status.end() && past->is_number_integer() ? past->get<long long>() : 0;
      patch.push_back({{"op", "add"}, {"path", "/status/accumulatedPastExecutionTimeSeconds"}, {"value", before + seconds}});
    }
    bool checks_ready = true;
    for (const Json& check : status.value("admissionChecks", Json::array())) {
      if (check.is_object() && Field(check, "state") != "Ready") checks_ready = false;
    }
    SetCondition(conditions, "Admitted", false, checks_ready ? "NoReservation" : "NoReservationUnsatisfiedChecks",
                 checks_ready ? "The workload has no reservation" : "The workload has no reservation and not all checks ready",
                 generation, now);
  }
  SetCondition(conditions, "Requeued", requeue_now, eviction_reason, eviction_message, generation, now);
  SetCondition(conditions, "QuotaReserved", false, "Pending", eviction_message, generation, now);
  if (status.contains("admission")) patch.push_back({{"op", "remove"}, {"path", "/status/admission"}});
  patch.push_back({{"op", "add"}, {"path", "/status/conditions"}, {"value", conditions}});
  return patch;
}

Json SetPodsReadyPatch(const Json& workload, bool ready, const std::string& reason, const std::string& message, api::Time now) {
  const Json metadata = workload.value("metadata", Json::object());
  const Json status = workload.value("status", Json::object());
  Json conditions = status.is_object() ? status.value("conditions", Json::array()) : Json::array();
  if (!conditions.is_array()) conditions = Json::array();
  SetCondition(conditions, "PodsReady", ready, reason, message, metadata.value("generation", Json()), now);
  Json patch = Json::array();
  patch.push_back({{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", Field(metadata, "resourceVersion")}});
  if (!status.is_object() || status.empty()) patch.push_back({{"op", "add"}, {"path", "/status"}, {"value", Json::object()}});
  patch.push_back({{"op", "add"}, {"path", "/status/conditions"}, {"value", conditions}});
  return patch;
}

}  // namespace ncclop::desired

namespace ncclop::desired {

Json SetActivePatch(const Json& workload, bool active) {
  const Json metadata = workload.value("metadata", Json::object());
  Json patch = {{"metadata", {{"resourceVersion", metadata.value("resourceVersion", "")},
                              {"annotations", {{std::string(contract::kAnnotationSuspended), active ? Json() : Json("true")}}}}},
                {"spec", {{"active", active}}}};
  return patch;
}

void ApplyFlavors(Json& pod, const std::vector<Json>& flavors) {
  Json& spec = pod["spec"];
  for (const Json& flavor : flavors) {
    const Json flavor_spec = flavor.value("spec", Json::object());
    if (!flavor_spec.is_object()) continue;
    const Json labels = flavor_spec.value("nodeLabels", Json::object());
    if (labels.is_object()) {
      for (const auto& [key, value] : labels.items()) spec["nodeSelector"][key] = value;
    }
    const Json tolerations_to_add = flavor_spec.value("tolerations", Json::array());
    if (!tolerations_to_add.is_array()) continue;
    for (const Json& toleration : tolerations_to_add) {
      if (!spec.contains("tolerations") || !spec["tolerations"].is_array()) spec["tolerations"] = Json::array();
      Json& tolerations = spec["tolerations"];
      if (std::find(tolerations.begin(), tolerations.end(), toleration) == tolerations.end()) tolerations.push_back(toleration);
    }
  }
}

}  // namespace ncclop::desired
