#include "policy/publish_rule.h"

#include "policy/root_ids.h"

namespace ncclop::policy {
namespace {

PublishDecision Skip(std::string why) { return {std::nullopt, std::move(why)}; }

// Not yet, but soon, with no event of the root pod to say when (pods still being created or
// removed): the fast path tries again.
PublishDecision Later(std::string why) {
  PublishDecision later = Skip(std::move(why));
  later.retry_soon = true;
  return later;
}

}  // namespace

PublishDecision DecidePublish(const api::NcclJob& job, const api::NcclJobStatus& st,
                              const observed::AttemptView& view, const observed::ObservedConfigMap& cm,
                              api::Time now) {
  const int attempt = st.attempt;
  if (job.being_deleted) return Skip("the job is being deleted");
  if (!job.spec_error.empty()) return Skip("the job's spec is invalid");
  if (st.Finished()) return Skip("the job has finished");
  if (job.spec.suspend || st.IsTrue(api::condition::kSuspended)) return Skip("the job is suspended");
  if (st.IsTrue(api::condition::kRestarting)) return Skip("the job is between attempts");
  if (attempt <= 0) return Skip("no attempt has started");
  if (view.attempt != attempt) return Skip("the pods were sorted for another attempt");
  if (cm.Published(attempt)) return Skip("the ConfigMap already holds this attempt's id");
  const observed::ObservedPod* root = view.root();
  if (!root) return Skip("no root pod of the attempt in the cache");
  if (root->terminating) return Skip("the root pod is being deleted");
  if (root->failed) return Skip("the root pod failed");
  if (root->unique_id.empty()) return Skip("the root pod has not reported an id");
  if (root->unique_id_attempt != attempt) return Skip("the root pod's id is of another attempt");
  if (!view.complete()) return Later("not every pod of the attempt is in the cache yet");
  // The new attempt's pods are made while the last of an old one go (decide.cc, Converge):
  // no id until they are gone, so no trainer of this attempt starts NCCL beside an old one.
  if (!view.stale.empty()) return Later("a pod of another attempt is still there");
  // A pod moved to this attempt in place serves it once its containers restarted for it
  // (observed/pod.h): until then its trainer may still be one of the last attempt.
  for (const observed::ObservedPod* p : view.members) {
    if (p->in_place && p->trainer_restarts < p->restarts_before) return Later("pod " + p->name + " has not restarted for this attempt yet");
  }
  RootIds ids = CollectRootIds(job, view);
  if (!ids.list) return Skip(ids.missing);
  return {desired::PublishedId{*ids.list, api::FormatTime(now)}, {}};
}

}  // namespace ncclop::policy
