#include "api/nccl_job.h"

#include <algorithm>
#include <limits>

#include "contract/names.h"

namespace ncclop::api {
namespace {

kube::Status Invalid(const std::string& field, const std::string& what) {
  return kube::Status::Local("InvalidSpec", "spec." + field + " " + what);
}

// Reads an optional integer field within [lo, hi]; absent keeps *out (the default).
kube::Status ReadInt(const Json& obj, const char* key, const std::string& path, std::int64_t lo,
                     std::int64_t hi, std::int64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return kube::Status::Ok();
  if (!it->is_number_integer()) return Invalid(path, "must be an integer, got " + it->dump());
  std::int64_t v = it->get<std::int64_t>();
  if (v < lo || v > hi) {
    return Invalid(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                             ", got " + std::to_string(v));
  }
  *out = v;
  return kube::Status::Ok();
}

kube::Status ReadInt32(const Json& obj, const char* key, const std::string& path, int lo, int hi,
                       int* out) {
  std::int64_t v = *out;
  kube::Status s = ReadInt(obj, key, path, lo, hi, &v);
  *out = static_cast<int>(v);
  return s;
}

std::string StringAt(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int IntAt(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int>() : 0;
}

kube::Status ParseFailurePolicy(const Json& fp, FailurePolicy* out) {
  if (!fp.is_object()) return Invalid("failurePolicy", "must be an object");
  if (auto s = ReadInt32(fp, "maxRestarts", "failurePolicy.maxRestarts", 0, 1000, &out->max_restarts); !s.ok()) return s;
  if (auto s = ReadInt32(fp, "backoffSeconds", "failurePolicy.backoffSeconds", 0, 3600, &out->backoff_seconds); !s.ok()) return s;
  if (auto s = ReadInt32(fp, "maxBackoffSeconds", "failurePolicy.maxBackoffSeconds", 0, 86400, &out->max_backoff_seconds); !s.ok()) return s;
  if (auto it = fp.find("maxDisruptions"); it != fp.end() && !it->is_null()) {
    int cap = 0;
    if (auto s = ReadInt32(fp, "maxDisruptions", "failurePolicy.maxDisruptions", 0, 10000, &cap); !s.ok()) return s;
    out->max_disruptions = cap;
  }
  if (auto s = ReadInt32(fp, "forbiddenRetrySeconds", "failurePolicy.forbiddenRetrySeconds", 0, 86400,
                         &out->forbidden_retry_seconds);
      !s.ok()) {
    return s;
  }
  if (out->backoff_seconds > out->max_backoff_seconds) {
    return Invalid("failurePolicy.backoffSeconds", "must not exceed failurePolicy.maxBackoffSeconds");
  }
  if (auto it = fp.find("failFastExitCodes"); it != fp.end() && !it->is_null()) {
    if (!it->is_array()) return Invalid("failurePolicy.failFastExitCodes", "must be a list of exit codes");
    for (const Json& code : *it) {
      if (!code.is_number_integer() || code.get<int>() < 1 || code.get<int>() > 255) {
        return Invalid("failurePolicy.failFastExitCodes", "entries must be exit codes 1..255, got " + code.dump());
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
  if (auto rp = StringAt(*spec, "restartPolicy"); !rp.empty() && rp != "Never") {
    return Invalid("template.spec.restartPolicy", "must be Never (or unset): the operator restarts failed attempts, got " + rp);
  }
  out->trainer_container = names.front();
  if (auto md = tmpl.find("metadata"); md != tmpl.end() && md->is_object()) {
    if (auto ann = md->find("annotations"); ann != md->end() && ann->is_object()) {
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
  if (auto s = ReadInt32(spec, "replicas", "replicas", 1, 4096, &out.replicas); !s.ok()) return s;
  if (auto s = ReadInt32(spec, "gpusPerPod", "gpusPerPod", 0, 64, &out.gpus_per_pod); !s.ok()) return s;
  if (auto s = ReadInt32(spec, "initTimeoutSeconds", "initTimeoutSeconds", 1, 86400, &out.init_timeout_seconds); !s.ok()) return s;
  if (auto it = spec.find("suspend"); it != spec.end() && !it->is_null()) {
    if (!it->is_boolean()) return Invalid("suspend", "must be true or false");
    out.suspend = it->get<bool>();
  }
  if (spec.contains("ttlSecondsAfterFinished") && !spec["ttlSecondsAfterFinished"].is_null()) {
    std::int64_t ttl = 0;
    if (auto s = ReadInt(spec, "ttlSecondsAfterFinished", "ttlSecondsAfterFinished", 0,
                         std::numeric_limits<std::int32_t>::max(), &ttl);
        !s.ok()) {
      return s;
    }
    out.ttl_seconds_after_finished = ttl;
  }
  if (spec.contains("activeDeadlineSeconds") && !spec["activeDeadlineSeconds"].is_null()) {
    std::int64_t deadline = 0;
    if (auto s = ReadInt(spec, "activeDeadlineSeconds", "activeDeadlineSeconds", 1,
                         std::numeric_limits<std::int32_t>::max(), &deadline);
        !s.ok()) {
      return s;
    }
    out.active_deadline_seconds = deadline;
  }
  if (auto net = spec.find("network"); net != spec.end() && net->is_object()) {
    out.socket_ifname = StringAt(*net, "socketIfname");
    if (net->contains("sidecarPort") && !(*net)["sidecarPort"].is_null()) {
      int port = 0;
      if (auto s = ReadInt32(*net, "sidecarPort", "network.sidecarPort", 1024, 65534, &port); !s.ok()) return s;
      out.sidecar_port = port;
    }
    if (net->contains("bootstrapRoots") && !(*net)["bootstrapRoots"].is_null()) {
      if (auto s = ReadInt32(*net, "bootstrapRoots", "network.bootstrapRoots", 1, 4096, &out.bootstrap_roots); !s.ok()) {
        return s;
      }
      if (out.bootstrap_roots > out.replicas) {
        return Invalid("network.bootstrapRoots", "must be at most replicas (" + std::to_string(out.replicas) +
                                                     "): each bootstrap root is a pod");
      }
      out.bootstrap_roots_set = true;
    }
  }
  if (auto fp = spec.find("failurePolicy"); fp != spec.end() && !fp->is_null()) {
    if (auto s = ParseFailurePolicy(*fp, &out.failure_policy); !s.ok()) return s;
  }
  if (auto gang = spec.find("gangScheduling"); gang != spec.end() && !gang->is_null()) {
    const std::string value = gang->is_string() ? gang->get<std::string>() : gang->dump();
    if (value == "Auto") {
      out.gang_scheduling = GangScheduling::kAuto;
    } else if (value == "Required") {
      out.gang_scheduling = GangScheduling::kRequired;
    } else if (value == "Disabled") {
      out.gang_scheduling = GangScheduling::kDisabled;
    } else {
      return Invalid("gangScheduling", "must be Auto, Required or Disabled, got " + value);
    }
  }
  auto tmpl = spec.find("template");
  if (auto s = ParseTemplate(tmpl == spec.end() ? Json() : *tmpl, &out); !s.ok()) return s;
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
