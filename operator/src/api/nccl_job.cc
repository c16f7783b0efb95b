#include "api/nccl_job.h"

#include <algorithm>
#include <string_view>

#include "api/label_key.h"
#include "api/quantity.h"
#include "api/spec_fields.h"
#include "contract/names.h"

namespace ncclop::api {
namespace {

kube::Status Invalid(const std::string& field, const std::string& what) {
  return kube::Status::Local("InvalidSpec", "spec." + field + " " + what);
}

// Reads an integer field of `parent` within its row's bounds; absent keeps *out (the default).
kube::Status ReadInt(const Json& parent, const spec_fields::IntField& field, std::int64_t* out) {
  const std::string path(spec_fields::Named(field.path));
  auto it = parent.find(spec_fields::Key(field.path));
  if (it == parent.end() || it->is_null()) return kube::Status::Ok();
  if (!it->is_number_integer()) return Invalid(path, "must be an integer, got " + it->dump());
  std::int64_t v = it->get<std::int64_t>();
  if (v < field.minimum || v > field.maximum) {
    return Invalid(path, "must be between " + std::to_string(field.minimum) + " and " +
                             std::to_string(field.maximum) + ", got " + std::to_string(v));
  }
  *out = v;
  return kube::Status::Ok();
}

// A field with a default: *out holds it, and keeps it when the field is absent.
template <typename T>
kube::Status Read(const Json& parent, const spec_fields::IntField& field, T* out) {
  std::int64_t v = *out;
  kube::Status s = ReadInt(parent, field, &v);
  *out = static_cast<T>(v);
  return s;
}

// A field without a default: absent or null leaves *out unset.
template <typename T>
kube::Status ReadOptional(const Json& parent, const spec_fields::IntField& field, std::optional<T>* out) {
  auto it = parent.find(spec_fields::Key(field.path));
  if (it == parent.end() || it->is_null()) return kube::Status::Ok();
  T v = 0;
  if (auto s = Read(parent, field, &v); !s.ok()) return s;
  *out = v;
  return kube::Status::Ok();
}

kube::Status ReadBool(const Json& parent, const spec_fields::BoolField& field, bool* out) {
  auto it = parent.find(spec_fields::Key(field.path));
  if (it == parent.end() || it->is_null()) return kube::Status::Ok();
  if (!it->is_boolean()) return Invalid(std::string(field.path), "must be true or false");
  *out = it->get<bool>();
  return kube::Status::Ok();
}

// Reads an enum field; absent or null gives "" (the caller keeps its default; "" is no value).
kube::Result<std::string> ReadEnum(const Json& parent, const spec_fields::EnumField& field) {
  auto it = parent.find(spec_fields::Key(field.path));
  if (it == parent.end() || it->is_null()) return std::string();
  const std::string value = it->is_string() ? it->get<std::string>() : it->dump();
  if (!spec_fields::Allows(field, value)) {
    return Invalid(std::string(field.path), "must be " + spec_fields::OneOf(field) + ", got " + value);
  }
  return value;
}

// `name` is one of spec_fields::kGangScheduling's values (ReadEnum checked it).
GangScheduling GangSchedulingNamed(std::string_view name) {
  if (name == "Required") return GangScheduling::kRequired;
  if (name == "Disabled") return GangScheduling::kDisabled;
  return GangScheduling::kAuto;
}

// `name` is one of spec_fields::kRestartStrategy's values (ReadEnum checked it).
RestartStrategy RestartStrategyNamed(std::string_view name) {
  if (name == "InPlace") return RestartStrategy::kInPlace;
  if (name == "Recreate") return RestartStrategy::kRecreate;
  return RestartStrategy::kAuto;
}

std::string StringAt(const Json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int IntAt(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int>() : 0;
}

// Reads a quantity field: a string IsQuantity accepts, or a whole number that is not negative;
// absent or null keeps *out (the default).
kube::Status ReadQuantity(const Json& parent, const spec_fields::QuantityField& field, std::string* out) {
  auto it = parent.find(spec_fields::Key(field.path));
  if (it == parent.end() || it->is_null()) return kube::Status::Ok();
  std::string text;
  if (it->is_number_unsigned()) {
    text = std::to_string(it->get<std::uint64_t>());
  } else if (it->is_number_integer() && it->get<std::int64_t>() >= 0) {
    text = std::to_string(it->get<std::int64_t>());
  } else if (it->is_string()) {
    text = it->get<std::string>();
  }
  if (!IsQuantity(text)) {
    return Invalid(std::string(field.path), "must be a Kubernetes quantity like " + std::string(field.default_value) +
                                                " or 0, got " + (it->is_string() ? text : it->dump()));
  }
  *out = text;
  return kube::Status::Ok();
}

// spec.computeDomain; the pods' claim of its channel must not clash with one of the template's.
kube::Status ParseComputeDomain(const Json& cd, ComputeDomainRequest* out) {
  if (!cd.is_object()) return Invalid("computeDomain", "must be an object ({} for the defaults)");
  out->requested = true;
  if (auto s = Read(cd, spec_fields::kComputeDomainNumNodes, &out->num_nodes); !s.ok()) return s;
  auto mode = ReadEnum(cd, spec_fields::kComputeDomainAllocationMode);
  if (!mode.ok()) return mode.status();
  if (!mode->empty()) out->allocation_mode = *mode;
  return kube::Status::Ok();
}

// Whether `list` (a pod's resourceClaims or a container's resources.claims) has an entry `name`.
bool ListsClaim(const Json& list, std::string_view name) {
  if (!list.is_array()) return false;
  for (const Json& claim : list) {
    if (claim.is_object() && StringAt(claim, "name") == name) return true;
  }
  return false;
}

kube::Status CheckComputeDomainClaimIsFree(const NcclJobSpec& spec) {
  const Json& pod = spec.pod_template["spec"];
  const std::string_view claim = contract::kComputeDomainClaim;
  bool taken = ListsClaim(pod.value("resourceClaims", Json()), claim);
  for (const Json& c : pod["containers"]) {
    if (StringAt(c, "name") != spec.trainer_container || !c.contains("resources") || !c["resources"].is_object()) continue;
    taken = taken || ListsClaim(c["resources"].value("claims", Json()), claim);
  }
  if (!taken) return kube::Status::Ok();
  return Invalid("template.spec.resourceClaims",
                 "must not name a claim " + std::string(claim) +
                     ": with spec.computeDomain the operator adds that claim of the ComputeDomain's channel itself");
}

kube::Status ParseFailurePolicy(const Json& fp, FailurePolicy* out) {
  if (!fp.is_object()) return Invalid("failurePolicy", "must be an object");
  if (auto s = Read(fp, spec_fields::kMaxRestarts, &out->max_restarts); !s.ok()) return s;
  if (auto s = Read(fp, spec_fields::kBackoffSeconds, &out->backoff_seconds); !s.ok()) return s;
  if (auto s = Read(fp, spec_fields::kMaxBackoffSeconds, &out->max_backoff_seconds); !s.ok()) return s;
  if (auto s = ReadOptional(fp, spec_fields::kMaxDisruptions, &out->max_disruptions); !s.ok()) return s;
  if (auto s = Read(fp, spec_fields::kForbiddenRetrySeconds, &out->forbidden_retry_seconds); !s.ok()) return s;
  if (auto s = ReadOptional(fp, spec_fields::kStallTimeoutSeconds, &out->stall_timeout_seconds); !s.ok()) return s;
  if (out->backoff_seconds > out->max_backoff_seconds) {
    return Invalid("failurePolicy.backoffSeconds", "must not exceed failurePolicy.maxBackoffSeconds");
  }
  auto strategy = ReadEnum(fp, spec_fields::kRestartStrategy);
  if (!strategy.ok()) return strategy.status();
  if (!strategy->empty()) out->restart_strategy = RestartStrategyNamed(*strategy);
  const spec_fields::IntField& exit_code = spec_fields::kFailFastExitCode;
  if (auto it = fp.find(spec_fields::Key(exit_code.path)); it != fp.end() && !it->is_null()) {
    const std::string path(spec_fields::Named(exit_code.path));
    if (!it->is_array()) return Invalid(path, "must be a list of exit codes");
    for (const Json& code : *it) {
      if (!code.is_number_integer() || code.get<int>() < exit_code.minimum || code.get<int>() > exit_code.maximum) {
        return Invalid(path, "entries must be exit codes " + std::to_string(exit_code.minimum) + ".." +
                                 std::to_string(exit_code.maximum) + ", got " + code.dump());
      }
      out->fail_fast_exit_codes.push_back(code.get<int>());
    }
  }
  return kube::Status::Ok();
}

kube::Status ParseTemplate(const Json& tmpl, NcclJobSpec* out) {
  if (!tmpl.is_object()) return Invalid("template", "is required: a pod template with at least one container");
  auto spec = tmpl.find("spec");
  if (spec == tmpl.end() || !spec->is_object()) return Invalid("template.spec", "is required");
  auto containers = spec->find("containers");
  if (containers == spec->end() || !containers->is_array() || containers->empty()) {
    return Invalid("template.spec.containers", "must list at least one container (the trainer)");
  }
  std::vector<std::string> names;
  for (const Json& c : *containers) {
    std::string name = c.is_object() ? StringAt(c, "name") : "";
    if (name.empty()) return Invalid("template.spec.containers", "entries need a name");
    if (name == contract::kSidecarContainerName) {
      return Invalid("template.spec.containers", "must not use the name nccl-sidecar (reserved for the injected sidecar)");
    }
    names.push_back(name);
  }
  const spec_fields::EnumField& restart_policy = spec_fields::kRestartPolicy;
  if (auto rp = StringAt(*spec, spec_fields::Key(restart_policy.path)); !rp.empty() && !spec_fields::Allows(restart_policy, rp)) {
    return Invalid(std::string(restart_policy.path), "must be " + spec_fields::OneOf(restart_policy) +
                                                         " (or unset): the operator restarts failed attempts, got " + rp);
  }
  out->trainer_container = names.front();
  if (auto md = tmpl.find("metadata"); md != tmpl.end() && md->is_object()) {
    if (auto ann = md->find("annotations"); ann != md->end() && ann->is_object()) {
      auto topology = ParseKueueTopologyRequest(*ann, out->replicas);
      if (!topology.ok()) return topology.status();
      out->kueue_topology = std::move(*topology);
      std::string wanted = StringAt(*ann, std::string(contract::kAnnotationTrainerContainer).c_str());
      if (!wanted.empty()) {
        if (std::find(names.begin(), names.end(), wanted) == names.end()) {
          return Invalid("template.metadata.annotations[nccl.dev/trainer-container]",
                         "names container \"" + wanted + "\", which is not in template.spec.containers");
        }
        out->trainer_container = wanted;
      }
    }
  }
  out->pod_template = tmpl;
  return kube::Status::Ok();
}

}  // namespace

kube::Result<NcclJobSpec> ParseSpec(const Json& spec) {
  NcclJobSpec out;
  if (!spec.is_object()) return Invalid("", "is required");
  if (auto s = Read(spec, spec_fields::kReplicas, &out.replicas); !s.ok()) return s;
  if (auto s = Read(spec, spec_fields::kGpusPerPod, &out.gpus_per_pod); !s.ok()) return s;
  if (auto s = Read(spec, spec_fields::kInitTimeoutSeconds, &out.init_timeout_seconds); !s.ok()) return s;
  if (auto s = ReadBool(spec, spec_fields::kSuspend, &out.suspend); !s.ok()) return s;
  if (auto s = ReadOptional(spec, spec_fields::kTtlSecondsAfterFinished, &out.ttl_seconds_after_finished); !s.ok()) {
    return s;
  }
  if (auto s = ReadOptional(spec, spec_fields::kActiveDeadlineSeconds, &out.active_deadline_seconds); !s.ok()) {
    return s;
  }
  if (auto net = spec.find("network"); net != spec.end() && net->is_object()) {
    out.socket_ifname = StringAt(*net, "socketIfname");
    if (auto s = ReadOptional(*net, spec_fields::kSidecarPort, &out.sidecar_port); !s.ok()) return s;
    const spec_fields::IntField& roots = spec_fields::kBootstrapRoots;
    if (auto it = net->find(spec_fields::Key(roots.path)); it != net->end() && !it->is_null()) {
      if (auto s = Read(*net, roots, &out.bootstrap_roots); !s.ok()) return s;
      if (out.bootstrap_roots > out.replicas) {
        return Invalid(std::string(roots.path), "must be at most replicas (" + std::to_string(out.replicas) +
                                                    "): each bootstrap root is a pod");
      }
      out.bootstrap_roots_set = true;
    }
  }
  if (auto fp = spec.find("failurePolicy"); fp != spec.end() && !fp->is_null()) {
    if (auto s = ParseFailurePolicy(*fp, &out.failure_policy); !s.ok()) return s;
  }
  auto gang = ReadEnum(spec, spec_fields::kGangScheduling);
  if (!gang.ok()) return gang.status();
  if (!gang->empty()) out.gang_scheduling = GangSchedulingNamed(*gang);
  if (auto s = ReadQuantity(spec, spec_fields::kShmSize, &out.shm_size); !s.ok()) return s;
  if (auto cd = spec.find("computeDomain"); cd != spec.end() && !cd->is_null()) {
    if (auto s = ParseComputeDomain(*cd, &out.compute_domain); !s.ok()) return s;
  }
  if (auto key = spec.find("gangTopologyKey"); key != spec.end() && !key->is_null()) {
    if (!key->is_string() || !IsLabelKey(key->get<std::string>())) {
      return Invalid("gangTopologyKey", std::string(kLabelKeyRule) + ", got " + key->dump());
    }
    if (out.gang_scheduling == GangScheduling::kDisabled) {
      return Invalid("gangTopologyKey", "needs gang scheduling: spec.gangScheduling is Disabled");
    }
    out.gang_topology_key = key->get<std::string>();
  }
  auto tmpl = spec.find("template");
  if (auto s = ParseTemplate(tmpl == spec.end() ? Json() : *tmpl, &out); !s.ok()) return s;
  if (out.compute_domain.requested) {
    if (auto s = CheckComputeDomainClaimIsFree(out); !s.ok()) return s;
  }
  return out;
}

std::string ProgressSummary(const Progress& p) {
  std::string out = std::to_string(p.step);
  if (p.total_steps && *p.total_steps > 0) {
    out += "/" + std::to_string(*p.total_steps) + " (" + std::to_string(ProgressPercent(p)) + "%)";
  }
  return out;
}

int ProgressPercent(const Progress& p) {
  if (!p.total_steps || *p.total_steps <= 0 || p.step <= 0) return 0;
  return static_cast<int>(std::min<std::int64_t>(100, p.step * 100 / *p.total_steps));
}

Json ProgressToJson(const Progress& p) {
  Json out = {{"attempt", p.attempt}, {"step", p.step}, {"summary", ProgressSummary(p)}};
  if (p.total_steps) {
    out["totalSteps"] = *p.total_steps;
    out["percent"] = ProgressPercent(p);
  }
  if (!p.time.empty()) out["time"] = p.time;
  if (!p.metrics.empty()) {
    Json metrics = Json::object();
    for (const auto& [name, value] : p.metrics) metrics[name] = value;
    out["metrics"] = std::move(metrics);
  }
  return out;
}

// status.progress as the operator wrote it; nullopt when absent or not an object with a step.
std::optional<Progress> ParseProgressStatus(const Json& progress) {
  if (!progress.is_object()) return std::nullopt;
  auto step = progress.find("step");
  if (step == progress.end() || !step->is_number_integer()) return std::nullopt;
  Progress out;
  out.attempt = IntAt(progress, "attempt");
  out.step = step->get<std::int64_t>();
  if (auto total = progress.find("totalSteps"); total != progress.end() && total->is_number_integer()) {
    out.total_steps = total->get<std::int64_t>();
  }
  out.time = StringAt(progress, "time");
  if (auto metrics = progress.find("metrics"); metrics != progress.end() && metrics->is_object()) {
    for (auto it = metrics->begin(); it != metrics->end(); ++it) {
      if (it->is_string()) out.metrics.emplace_back(it.key(), it->get<std::string>());
    }
  }
  return out;
}

NcclJobStatus ParseStatus(const Json& status) {
  NcclJobStatus out;
  if (!status.is_object()) return out;
  if (auto it = status.find("observedGeneration"); it != status.end() && it->is_number_integer()) {
    out.observed_generation = it->get<std::int64_t>();
  }
  out.state = StringAt(status, "state");
  out.attempt = IntAt(status, "attempt");
  out.restarts = IntAt(status, "restarts");
  out.disruptions = IntAt(status, "disruptions");
  out.ready = IntAt(status, "ready");
  out.active = IntAt(status, "active");
  out.succeeded = IntAt(status, "succeeded");
  out.failed = IntAt(status, "failed");
  out.start_time = StringAt(status, "startTime");
  out.attempt_start_time = StringAt(status, "attemptStartTime");
  out.restart_after = StringAt(status, "restartAfter");
  out.completion_time = StringAt(status, "completionTime");
  out.id_published_time = StringAt(status, "idPublishedTime");
  out.restart_strategy = StringAt(status, "restartStrategy");
  out.pod_shape = IntAt(status, "podShape");
  out.progress = ParseProgressStatus(status.contains("progress") ? status["progress"] : Json());
  if (auto it = status.find("conditions"); it != status.end() && it->is_array()) {
    for (const Json& c : *it) {
      if (!c.is_object()) continue;
      Condition cond{StringAt(c, "type"), StringAt(c, "status"), StringAt(c, "reason"),
                     StringAt(c, "message"), StringAt(c, "lastTransitionTime"), 0};
      if (auto g = c.find("observedGeneration"); g != c.end() && g->is_number_integer()) {
        cond.observed_generation = g->get<std::int64_t>();
      }
      out.conditions.push_back(std::move(cond));
    }
  }
  return out;
}

Json StatusToJson(const NcclJobStatus& s) {
  Json out = Json::object();
  out["observedGeneration"] = s.observed_generation;
  if (!s.state.empty()) out["state"] = s.state;
  out["attempt"] = s.attempt;
  out["restarts"] = s.restarts;
  out["disruptions"] = s.disruptions;
  out["ready"] = s.ready;
  out["active"] = s.active;
  out["succeeded"] = s.succeeded;
  out["failed"] = s.failed;
  auto put_time = [&](const char* key, const std::string& v) {
    if (!v.empty()) out[key] = v;
  };
  put_time("startTime", s.start_time);
  put_time("attemptStartTime", s.attempt_start_time);
  put_time("restartAfter", s.restart_after);
  put_time("completionTime", s.completion_time);
  put_time("idPublishedTime", s.id_published_time);
  if (!s.restart_strategy.empty()) out["restartStrategy"] = s.restart_strategy;
  if (s.pod_shape > 0) out["podShape"] = s.pod_shape;
  if (s.progress) out["progress"] = ProgressToJson(*s.progress);
  Json conds = Json::array();
  for (const Condition& c : s.conditions) {
    conds.push_back({{"type", c.type},
                     {"status", c.status},
                     {"reason", c.reason},
                     {"message", c.message},
                     {"lastTransitionTime", c.last_transition_time},
                     {"observedGeneration", c.observed_generation}});
  }
  out["conditions"] = std::move(conds);
  return out;
}

bool BeingDeleted(const Json& metadata) {
  auto it = metadata.find("deletionTimestamp");
  return it != metadata.end() && !it->is_null();
}

kube::Result<NcclJob> ParseNcclJob(const Json& object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    return kube::Status::Local("InvalidObject", "NcclJob has no metadata");
  }
  const Json& md = object["metadata"];
  NcclJob job;
  job.name = StringAt(md, "name");
  job.namespace_ = StringAt(md, "namespace");
  job.uid = StringAt(md, "uid");
  job.resource_version = StringAt(md, "resourceVersion");
  if (auto g = md.find("generation"); g != md.end() && g->is_number_integer()) {
    job.generation = g->get<std::int64_t>();
  }
  job.being_deleted = BeingDeleted(md);
  if (auto ann = md.find("annotations"); ann != md.end() && ann->is_object()) {
    job.misplaced_trainer_annotation = StringAt(*ann, std::string(contract::kAnnotationTrainerContainer).c_str());
  }
  if (auto labels = md.find("labels"); labels != md.end() && labels->is_object()) {
    job.queue_name = StringAt(*labels, std::string(contract::kLabelKueueQueueName).c_str());
    job.workload_priority_class = StringAt(*labels, std::string(contract::kLabelKueuePriorityClass).c_str());
  }
  if (job.name.empty() || job.namespace_.empty() || job.uid.empty()) {
    return kube::Status::Local("InvalidObject", "NcclJob metadata needs name, namespace and uid");
  }
  auto spec = ParseSpec(object.contains("spec") ? object["spec"] : Json());
  if (spec.ok()) {
    job.spec = std::move(spec).value();
  } else {
    job.spec_error = spec.status().message();
  }
  job.status = ParseStatus(object.contains("status") ? object["status"] : Json());
  return job;
}

const Condition* NcclJobStatus::Find(const std::string& type) const {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool NcclJobStatus::IsTrue(const std::string& type) const {
  const Condition* c = Find(type);
  return c != nullptr && c->status == "True";
}

}  // namespace ncclop::api
