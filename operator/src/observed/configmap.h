// What the operator saw of a job's ConfigMap <job>-nccl (contract/names.h): the attempt it is
// set to, whether it holds that attempt's id, and whose it is. Pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ncclop::observed {

struct ObservedConfigMap {
  bool exists = false;
  int attempt = 0;
  bool has_id = false;
  std::string published_at;
  std::string job_uid;  // data.jobUID: a ConfigMap left by an earlier job of the same name differs

  // The id of `for_attempt` is out: whoever wrote it, the trainers may already have it.
  bool Published(int for_attempt) const { return exists && attempt == for_attempt && has_id; }
};

ObservedConfigMap ObserveConfigMap(const nlohmann::json& configmap);

// As ObserveConfigMap, but one of another job UID (left by a deleted job of the same name:
// none of its attempts or ids are this job's) reads as absent.
ObservedConfigMap ObserveConfigMapOf(const nlohmann::json& configmap, const std::string& job_uid);

}  // namespace ncclop::observed
