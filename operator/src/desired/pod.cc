#include "desired/pod.h"

#include <iterator>
#include <set>
#include <vector>

#include "contract/env.h"
#include "contract/names.h"
#include "desired/env_configmap.h"
#include "desired/pod_shape.h"
#include "desired/rbac.h"
#include "desired/sidecar_ports.h"

namespace ncclop::desired {
namespace {

Json Var(const std::string& name, const std::string& value) { return {{"name", name}, {"value", value}}; }

Json FieldVar(const std::string& name, const std::string& field_path) {
  return {{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", field_path}}}}}};
}

// The contract's variables win over the user's of the same name: a trainer must never see a
// rank or attempt that disagrees with its pod's labels. The job's own (env_configmap.h) come by
// envFrom, last among the container's sources, so they win over the user's envFrom; a user's env
// entry of a contract name, which would win over any envFrom, is dropped. The pod's own come
// first in env, so the user's variables can refer to them ($(RANK), $(NCCLJOB_INDEX)): Kubernetes
// expands a reference only to a variable defined earlier, and every envFrom variable is.
void InjectEnv(Json& container, const Json& pod_env, const std::set<std::string>& contract_names, const Json& env_from) {
  Json env = pod_env;
  if (container.contains("env") && container["env"].is_array()) {
    for (const Json& v : container["env"]) {
      if (v.is_object() && v.contains("name") && contract_names.count(v["name"].get<std::string>()) == 0) env.push_back(v);
    }
  }
  container["env"] = std::move(env);
  Json sources = container.contains("envFrom") && container["envFrom"].is_array() ? container["envFrom"] : Json::array();
  sources.push_back(env_from);
  container["envFrom"] = std::move(sources);
}

Json HttpProbe(std::string_view path, int port, int period_seconds) {
  return {{"httpGet", {{"path", std::string(path)}, {"port", port}}},
          {"periodSeconds", period_seconds},
          {"failureThreshold", 3}};
}

Json Quantities(const std::string& cpu, const std::string& memory, const std::string& ephemeral_storage) {
  Json out = Json::object();
  if (!cpu.empty()) out["cpu"] = cpu;
  if (!memory.empty()) out["memory"] = memory;
  if (!ephemeral_storage.empty()) out["ephemeral-storage"] = ephemeral_storage;
  return out;
}

Json SidecarResourceJson(const SidecarResources& r) {
  Json out = Json::object();
  Json requests = Quantities(r.cpu_request, r.memory_request, r.ephemeral_storage_request);
  Json limits = Quantities(r.cpu_limit, r.memory_limit, r.ephemeral_storage_limit);
  if (!requests.empty()) out["requests"] = requests;
  if (!limits.empty()) out["limits"] = limits;
  return out;
}

Json Sidecar(const PodOptions& options, const SidecarPorts& ports, const Json& env, const Json& env_from) {
  Json sidecar = {{"name", contract::kSidecarContainerName},
                  {"image", options.sidecar_image},
                  {"command", {"nccl-sidecar"}},
                  {"args", Json::array({"--listen=127.0.0.1:" + std::to_string(ports.api),
                                        "--probe-listen=0.0.0.0:" + std::to_string(ports.probe)})},
                  {"restartPolicy", "Always"},
                  {"env", env},
                  {"envFrom", Json::array({env_from})},
                  {"ports",
                   Json::array({{{"name", "id-api"}, {"containerPort", ports.api}, {"protocol", "TCP"}},
                                {{"name", "probes"}, {"containerPort", ports.probe}, {"protocol", "TCP"}}})},
                  {"readinessProbe", HttpProbe(contract::kPathReadyz, ports.probe, 2)},
                  {"livenessProbe", HttpProbe(contract::kPathHealthz, ports.probe, 10)},
                  {"resources", SidecarResourceJson(options.sidecar_resources)},
                  {"securityContext", SidecarSecurityContext()}};
  if (!options.sidecar_image_pull_policy.empty()) sidecar["imagePullPolicy"] = options.sidecar_image_pull_policy;
  return sidecar;
}

// A RestartAllContainers rule on the exit codes `op` ("In"/"NotIn") `codes`.
Json RestartAllOn(const char* op, std::vector<int> codes) {
  return Json::array({{{"action", "RestartAllContainers"}, {"exitCodes", {{"operator", op}, {"values", codes}}}}});
}

// The pod restarts in place: the trainer's failure (any exit but 0 and the fail-fast codes) and
// any exit of the sidecar (it exits kSidecarExitAttemptOver when the job moves to a later attempt)
// make its kubelet restart every container of the pod. The sidecar keeps the attempt it served
// in a volume of its own, which outlives the restart.
void MakeRestartInPlace(const api::NcclJob& job, Json& spec, Json& sidecar) {
  std::vector<int> not_restarted = {0};
  for (int code : job.spec.failure_policy.fail_fast_exit_codes) not_restarted.push_back(code);
  for (Json& c : spec["containers"]) {
    if (c.value("name", "") != job.spec.trainer_container) continue;
    c["restartPolicy"] = "Never";
    c["restartPolicyRules"] = RestartAllOn("NotIn", not_restarted);
  }
  sidecar["restartPolicyRules"] = RestartAllOn("NotIn", {0});
  sidecar["args"].push_back(std::string(contract::kSidecarStateFlag) + "=" + std::string(contract::kSidecarStateDir));
  sidecar["volumeMounts"] = Json::array(
      {{{"name", std::string(contract::kSidecarStateVolume)}, {"mountPath", std::string(contract::kSidecarStateDir)}}});
  if (!spec.contains("volumes") || !spec["volumes"].is_array()) spec["volumes"] = Json::array();
  spec["volumes"].push_back({{"name", std::string(contract::kSidecarStateVolume)}, {"emptyDir", {{"sizeLimit", "1Mi"}}}});
}

Json MergedStringMap(const Json& base, const Json& overrides) {
  Json out = base.is_object() ? base : Json::object();
  for (auto& [k, v] : overrides.items()) out[k] = v;
  return out;
}

// The sidecar runs no user program: of the pod's own variables it gets those it reads
// (contract::env::kSidecarEnv), not the ones for the trainer (RANK, PADDLE_*, the pod's IP and
// name), which would only make every pod bigger for every watcher of pods (bench/scale/podcost.py:
// a 4096-pod job's pods are decoded by the API server, the scheduler, the kubelets and the
// controllers). The job's come by envFrom like everyone's.
Json SidecarEnv(const Json& pod_env) {
  const std::set<std::string> reads(std::begin(contract::env::kSidecarEnv), std::end(contract::env::kSidecarEnv));
  Json env = Json::array();
  for (const Json& v : pod_env) {
    if (reads.count(v["name"].get<std::string>())) env.push_back(v);
  }
  return env;
}

}  // namespace

Json SidecarSecurityContext() {
  constexpr int kSidecarUser = 65532;  // deploy/docker/sidecar.Dockerfile's USER
  return {{"runAsNonRoot", true},
          {"runAsUser", kSidecarUser},
          {"runAsGroup", kSidecarUser},
          {"allowPrivilegeEscalation", false},
          {"privileged", false},
          {"readOnlyRootFilesystem", true},
          {"capabilities", {{"drop", {"ALL"}}}},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

Json PodEnv(const api::NcclJob& job, int index, int attempt) {
  const api::NcclJobSpec& spec = job.spec;
  const std::string rank = std::to_string(index);
  Json env = Json::array({
      Var(contract::env::kIndex, rank),
      Var(contract::env::kAttempt, std::to_string(attempt)),
      Var(contract::env::kSidecarUrl, contract::SidecarUrl(ChooseSidecarPorts(job).api)),
      FieldVar(contract::env::kPodIp, "status.podIP"),
      FieldVar(contract::env::kPodName, "metadata.name"),
      Var(contract::env::kInitTimeoutSeconds, std::to_string(spec.init_timeout_seconds)),
  });
  // Only when the spec names it: a job without it keeps the pods it had.
  if (spec.bootstrap_roots_set) env.push_back(Var(contract::env::kBootstrapRoots, std::to_string(spec.bootstrap_roots)));
  if (!spec.socket_ifname.empty()) env.push_back(Var(contract::env::kNcclSocketIfname, spec.socket_ifname));
  env.push_back(Var(contract::env::kTorchRank, rank));
  env.push_back(Var(contract::env::kNodeRank, rank));
  // PaddlePaddle's collective names, one trainer process per pod like RANK/WORLD_SIZE.
  env.push_back(Var(contract::env::kPaddleTrainerId, rank));
  env.push_back(Var(contract::env::kPaddleCurrentEndpoint, PaddleEndpoint(job, index)));
  return env;
}

Json Pod(const api::NcclJob& job, int index, int attempt, const PodOptions& options, bool in_place) {
  const Json& tmpl = job.spec.pod_template;
  const Json tmpl_md = tmpl.contains("metadata") && tmpl["metadata"].is_object() ? tmpl["metadata"] : Json::object();
  const std::string name = contract::PodName(job.name, index);

  Json ours = {{std::string(contract::kLabelJobName), job.name},
               {std::string(contract::kLabelIndex), std::to_string(index)},
               {std::string(contract::kLabelAttempt), std::to_string(attempt)}};
  Json metadata = ObjectMetadata(job, name);
  metadata["labels"] = MergedStringMap(tmpl_md.value("labels", Json::object()), ours);
  // The identity is in the labels alone: an annotation repeating them was read by no one and cost
  // every pod its bytes twice (its own and its managedFields entry).
  Json annotations = MergedStringMap(tmpl_md.value("annotations", Json::object()), Json::object());
  if (in_place) annotations[std::string(contract::kAnnotationRestartsBefore)] = "0";
  if (annotations.is_object() && !annotations.empty()) metadata["annotations"] = std::move(annotations);

  Json spec = tmpl["spec"];
  const EnvValues job_env = JobEnv(job);
  const Json env = PodEnv(job, index, attempt);
  const Json env_from = EnvFromJob(job, job_env);
  std::set<std::string> contract_names;
  for (const auto& [var, value] : job_env) contract_names.insert(var);
  for (const Json& v : env) contract_names.insert(v["name"].get<std::string>());
  for (Json& c : spec["containers"]) {
    InjectEnv(c, env, contract_names, env_from);
    // A failed trainer's last output becomes its termination message, which the Restarting
    // event and condition quote: the pod itself is gone by the time anyone looks.
    if (c.value("name", "") == job.spec.trainer_container && !c.contains("terminationMessagePolicy")) {
      c["terminationMessagePolicy"] = "FallbackToLogsOnError";
    }
  }
  ShapeTrainer(job, options.gpu_resource, spec);  // its GPUs, /dev/shm, the ComputeDomain's channel
  Json sidecar = Sidecar(options, ChooseSidecarPorts(job), SidecarEnv(env), env_from);
  if (auto stall = job.spec.failure_policy.stall_timeout_seconds) {
    sidecar["args"].push_back(std::string(contract::kSidecarStallTimeoutFlag) + "=" + std::to_string(*stall));
  }
  if (in_place) MakeRestartInPlace(job, spec, sidecar);
  Json init = Json::array({std::move(sidecar)});
  if (spec.contains("initContainers") && spec["initContainers"].is_array()) {
    for (Json c : spec["initContainers"]) {
      InjectEnv(c, env, contract_names, env_from);
      init.push_back(std::move(c));
    }
  }
  spec["initContainers"] = std::move(init);
  spec["restartPolicy"] = "Never";
  spec["hostname"] = name;
  spec["subdomain"] = contract::ServiceName(job.name);
  // The user's ServiceAccount stays (workload identity, pull secrets); the job's Role is bound
  // to it (desired/rbac.h). The sidecar reads the ConfigMap with its token.
  spec["serviceAccountName"] = PodServiceAccountName(job);
  spec.erase("serviceAccount");
  spec["automountServiceAccountToken"] = true;

  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(metadata)}, {"spec", std::move(spec)}};
}

}  // namespace ncclop::desired
