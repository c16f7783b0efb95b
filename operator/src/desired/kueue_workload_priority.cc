#include "desired/kueue_workload_priority.h"

#include <limits>

#include "contract/names.h"

namespace ncclop::desired {
namespace {

std::int32_t ValueOf(const api::Json& priority_class) {
  auto it = priority_class.find("value");
  if (it == priority_class.end() || !it->is_number_integer()) return 0;
  const auto value = it->get<std::int64_t>();
  if (value < std::numeric_limits<std::int32_t>::min() || value > std::numeric_limits<std::int32_t>::max()) return 0;
  return static_cast<std::int32_t>(value);
}

std::string NameOf(const api::Json& object) {
  const api::Json metadata = object.value("metadata", api::Json::object());
  return metadata.is_object() ? metadata.value("name", "") : std::string();
}

api::Json ClassRef(const char* group, const char* kind, const std::string& name) {
  return {{"group", group}, {"kind", kind}, {"name", name}};
}

}  // namespace

PriorityClassToRead PriorityClassOf(const api::NcclJob& job) {
  if (!job.workload_priority_class.empty()) {
    return {PriorityClassToRead::Kind::kWorkloadPriorityClass, job.workload_priority_class};
  }
  const api::Json spec = job.spec.pod_template.value("spec", api::Json::object());
  if (spec.is_object()) {
    if (auto it = spec.find("priorityClassName"); it != spec.end() && it->is_string() && !it->get<std::string>().empty()) {
      return {PriorityClassToRead::Kind::kPriorityClass, it->get<std::string>()};
    }
  }
  return {};
}

KueueWorkloadPriority PriorityFrom(const PriorityClassToRead& what, const std::vector<api::Json>& classes) {
  using Kind = PriorityClassToRead::Kind;
  if (what.kind != Kind::kDefault) {
    const std::int32_t value = classes.empty() ? 0 : ValueOf(classes.front());
    return what.kind == Kind::kWorkloadPriorityClass
               ? KueueWorkloadPriority{ClassRef("kueue.x-k8s.io", "WorkloadPriorityClass", what.name), value}
               : KueueWorkloadPriority{ClassRef("scheduling.k8s.io", "PriorityClass", what.name), value};
  }
  // Several globalDefault classes (a race between admins): the lowest value, as Kueue picks.
  const api::Json* chosen = nullptr;
  for (const api::Json& pc : classes) {
    if (!pc.is_object() || pc.value("globalDefault", false) != true) continue;
    if (chosen == nullptr || ValueOf(pc) < ValueOf(*chosen)) chosen = &pc;
  }
  if (chosen == nullptr) return {};
  return {ClassRef("scheduling.k8s.io", "PriorityClass", NameOf(*chosen)), ValueOf(*chosen)};
}

void SetPriority(api::Json& workload, const KueueWorkloadPriority& priority) {
  api::Json& spec = workload["spec"];
  if (priority.class_ref.is_null()) {
    spec.erase("priorityClassRef");
  } else {
    spec["priorityClassRef"] = priority.class_ref;
  }
  spec["priority"] = priority.priority;
}

std::optional<std::string> WorkloadPriorityClassToFollow(const api::NcclJob& job, const api::Json& workload,
                                                         bool quota_reserved) {
  if (job.workload_priority_class.empty()) return std::nullopt;
  const api::Json spec = workload.value("spec", api::Json::object());
  const api::Json ref = spec.is_object() ? spec.value("priorityClassRef", api::Json()) : api::Json();
  if (ref.is_object()) {
    if (ref.value("kind", "") != "WorkloadPriorityClass") return std::nullopt;
    if (ref.value("name", "") == job.workload_priority_class) return std::nullopt;
    return job.workload_priority_class;
  }
  if (quota_reserved) return std::nullopt;
  return job.workload_priority_class;
}

api::Json SetPriorityPatch(const api::Json& workload, const KueueWorkloadPriority& priority) {
  const api::Json metadata = workload.value("metadata", api::Json::object());
  return {{"metadata", {{"resourceVersion", metadata.is_object() ? metadata.value("resourceVersion", "") : ""}}},
          {"spec", {{"priorityClassRef", priority.class_ref}, {"priority", priority.priority}}}};
}

}  // namespace ncclop::desired
