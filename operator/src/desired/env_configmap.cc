#include "desired/env_configmap.h"

#include <cstdio>

#include "contract/env.h"
#include "contract/names.h"
#include "desired/stable_hash.h"

namespace ncclop::desired {
std::string PaddleEndpoint(const api::NcclJob& job, int index) {
  return contract::PodName(job.name, index) + "." + contract::ServiceName(job.name) + "." + job.namespace_ + ".svc:" +
         std::to_string(contract::kPaddlePort);
}

EnvValues JobEnv(const api::NcclJob& job) {
  const api::NcclJobSpec& spec = job.spec;
  const std::string replicas = std::to_string(spec.replicas);
  EnvValues env = {
      {contract::env::kJobName, job.name},
      {contract::env::kNamespace, job.namespace_},
      {contract::env::kJobUid, job.uid},
      {contract::env::kReplicas, replicas},
      {contract::env::kGpusPerPod, std::to_string(spec.gpus_per_pod)},
      {contract::env::kWorldSize, std::to_string(spec.WorldSize())},
      {contract::env::kMasterAddr,
       contract::PodName(job.name, 0) + "." + contract::ServiceName(job.name) + "." + job.namespace_ + ".svc"},
      {contract::env::kMasterPort, std::to_string(contract::kMasterPort)},
      {contract::env::kTorchWorldSize, replicas},
      {contract::env::kNnodes, replicas},
      {contract::env::kLocalWorldSize, std::to_string(spec.LocalWorldSize())},
      {contract::env::kPaddleTrainersNum, replicas},
  };
  if (spec.replicas <= contract::kPaddleEndpointsMaxReplicas) {
    std::string endpoints;
    for (int i = 0; i < spec.replicas; ++i) endpoints += (i ? "," : "") + PaddleEndpoint(job, i);
    env.emplace_back(contract::env::kPaddleTrainerEndpoints, endpoints);
  }
  return env;
}

namespace {

std::string NameOf(const api::NcclJob& job, const EnvValues& env) {
  std::string text;
  for (const auto& [name, value] : env) text += name + "=" + value + "\n";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(Fnv1a64(text)));
  return contract::EnvConfigMapName(job.name, std::string(hash, 10));
}

}  // namespace

std::string EnvConfigMapName(const api::NcclJob& job) { return NameOf(job, JobEnv(job)); }

Json EnvConfigMap(const api::NcclJob& job) {
  const EnvValues env = JobEnv(job);
  Json data = Json::object();
  for (const auto& [name, value] : env) data[name] = value;
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", ObjectMetadata(job, NameOf(job, env))},
          {"immutable", true},
          {"data", std::move(data)}};
}

Json EnvFromJob(const api::NcclJob& job, const EnvValues& job_env) {
  return {{"configMapRef", {{"name", NameOf(job, job_env)}}}};
}

}  // namespace ncclop::desired
