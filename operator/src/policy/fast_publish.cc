#include "policy/fast_publish.h"

#include <string>
#include <utility>

#include "contract/names.h"
#include "observed/fields.h"

namespace ncclop::policy {
namespace {

// The (label index, id annotation, id attempt annotation) of a pod, "" when absent.
struct RootFacts {
  std::string index;
  std::string id;
  std::string id_attempt;
};

RootFacts Facts(const nlohmann::json& pod) {
  const nlohmann::json& md = observed::Metadata(pod);
  const nlohmann::json& labels = observed::ObjectField(md, "labels");
  const nlohmann::json& annotations = observed::ObjectField(md, "annotations");
  return {observed::StringField(labels, contract::kLabelIndex),
          observed::StringField(annotations, contract::kAnnotationUniqueId),
          observed::StringField(annotations, contract::kAnnotationUniqueIdAttempt)};
}

}  // namespace

PublishDecision DecideFastPublish(const api::NcclJob& job, const observed::AttemptView& attempt,
                                  const observed::ObservedConfigMap& cm, api::Time now) {
  const auto skip = [](std::string why) { return PublishDecision{std::nullopt, std::move(why)}; };
  if (!cm.exists) return skip("no ConfigMap in the cache");
  if (cm.job_uid != job.uid) return skip("the ConfigMap belongs to another job of the same name");
  if (cm.attempt != job.status.attempt) return skip("the ConfigMap is of another attempt");
  return DecidePublish(job, job.status, attempt, cm, now);
}

bool RootIdAnnounced(const nlohmann::json* before, const nlohmann::json& now) {
  RootFacts after = Facts(now);
  if (after.index.empty() || after.id.empty()) return false;
  if (!before) return true;
  RootFacts old = Facts(*before);
  return old.id != after.id || old.id_attempt != after.id_attempt;
}

}  // namespace ncclop::policy
