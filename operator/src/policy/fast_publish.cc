#include "policy/fast_publish.h"

#include <set>

#include "contract/names.h"
#include "policy/root_ids.h"

namespace ncclop::policy {
namespace {

FastPublish Skip(std::string why) { return {std::nullopt, std::move(why)}; }

// The (label index, id annotation, id attempt annotation) of a pod, "" when absent.
struct RootFacts {
  std::string index;
  std::string id;
  std::string id_attempt;
};

std::string StringAt(const nlohmann::json& map, std::string_view key) {
  if (!map.is_object()) return {};
  auto it = map.find(std::string(key));
  return it != map.end() && it->is_string() ? it->get<std::string>() : std::string();
}

RootFacts Facts(const nlohmann::json& pod) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  auto md = pod.find("metadata");
  if (md == pod.end() || !md->is_object()) return {};
  auto labels = md->find("labels");
  auto annotations = md->find("annotations");
  const nlohmann::json& l = labels != md->end() ? *labels : kEmpty;
  const nlohmann::json& a = annotations != md->end() ? *annotations : kEmpty;
  return {StringAt(l, contract::kLabelIndex), StringAt(a, contract::kAnnotationUniqueId),
          StringAt(a, contract::kAnnotationUniqueIdAttempt)};
}

}  // namespace

int PodsOfAttempt(const std::vector<ObservedPod>& pods, int attempt, int replicas) {
  std::set<int> indices;
  for (const ObservedPod& p : pods) {
    if (p.attempt == attempt && p.index >= 0 && p.index < replicas) indices.insert(p.index);
  }
  return static_cast<int>(indices.size());
}

FastPublish DecideFastPublish(const api::NcclJob& job, const std::optional<RootPod>& root, int pods_of_attempt,
                              const ObservedConfigMap& cm, api::Time now, const std::vector<ObservedPod>& pods) {
  const api::NcclJobStatus& st = job.status;
  const int attempt = st.attempt;
  if (job.being_deleted) return Skip("the job is being deleted");
  if (!job.spec_error.empty()) return Skip("the job's spec is invalid");
  if (st.Finished()) return Skip("the job has finished");
  if (job.spec.suspend || st.IsTrue(api::condition::kSuspended)) return Skip("the job is suspended");
  if (st.IsTrue(api::condition::kRestarting)) return Skip("the job is between attempts");
  if (attempt <= 0) return Skip("no attempt has started");
  if (!root) return Skip("no root pod in the cache");
  if (!root->owned_by_job) return Skip("the root pod belongs to another job of the same name");
  const ObservedPod& p = root->pod;
  if (p.index != 0) return Skip("the root pod has no index 0 label");
  if (p.attempt != attempt) return Skip("the root pod is of another attempt");
  if (p.terminating) return Skip("the root pod is being deleted");
  if (p.failed) return Skip("the root pod failed");
  if (p.unique_id.empty()) return Skip("the root pod has not reported an id");
  if (p.unique_id_attempt != attempt) return Skip("the root pod's id is of another attempt");
  if (!cm.exists) return Skip("no ConfigMap in the cache");
  if (cm.job_uid != job.uid) return Skip("the ConfigMap belongs to another job of the same name");
  if (cm.attempt != attempt) return Skip("the ConfigMap is of another attempt");
  if (cm.has_id) return Skip("the ConfigMap already holds this attempt's id");
  if (pods_of_attempt < job.spec.replicas) {
    FastPublish later = Skip("not every pod of the attempt is in the cache yet");
    later.retry_soon = true;
    return later;
  }
  for (const ObservedPod& other : pods) {
    if (other.attempt == attempt && other.index >= 0 && other.index < job.spec.replicas) continue;
    // The new attempt's pods are made while the last of an old one go (policy/decide.cc,
    // Converge): no id until they are gone.
    FastPublish later = Skip("a pod of another attempt is still there");
    later.retry_soon = true;
    return later;
  }
  if (job.spec.bootstrap_roots > 1) {
    RootIds ids = CollectRootIds(job, pods, attempt);
    if (!ids.list) return Skip(ids.missing);
    return {desired::PublishedId{*ids.list, api::FormatTime(now)}, {}};
  }
  return {desired::PublishedId{p.unique_id, api::FormatTime(now)}, {}};
}

bool RootIdAnnounced(const nlohmann::json* before, const nlohmann::json& now) {
  RootFacts after = Facts(now);
  if (after.index.empty() || after.id.empty()) return false;
  if (!before) return true;
  RootFacts old = Facts(*before);
  return old.id != after.id || old.id_attempt != after.id_attempt;
}

}  // namespace ncclop::policy
