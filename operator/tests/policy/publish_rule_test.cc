// One rule for both writers of the id: the full reconcile (Decide) and the fast path
// (DecideFastPublish) publish in the same cases.
#include "policy/publish_rule.h"

#include <gtest/gtest.h>

#include <vector>

#include "policy/decide.h"
#include "publish_fixtures.h"

namespace ncclop::policy {
namespace {

using Json = nlohmann::json;
using observed::ObservedConfigMap;
using observed::ObservedPod;
using testing::ConfigMapAt;
using testing::Fast;
using testing::JobAt;
using testing::kNow;
using testing::Pods;
using testing::PodsWithIds;
using testing::Root;
using testing::TwoRootJobAt;

// One rule for both writers (policy/publish_rule.h): the fast path had a rule of its own and
// published while a pod of another attempt was still there, which the full reconcile refused.
TEST(PublishRule, NeitherPathPublishesWhileAPodOfAnotherAttemptIsLeft) {
  std::vector<ObservedPod> pods = Pods(Root(2, 2), 2);
  ObservedPod old = testing::Pod(9, 1);  // a pod of attempt 1 not yet gone
  old.name = "demo-extra";
  pods.push_back(old);
  PublishDecision fast = Fast(JobAt(2), pods, ConfigMapAt(2));
  EXPECT_FALSE(fast.publish);
  EXPECT_EQ(fast.skipped_because, "a pod of another attempt is still there");
  api::NcclJob job = JobAt(2);
  job.status.state = api::state::kRunning;
  EXPECT_FALSE(Decide(job, pods, ConfigMapAt(2), kNow).publish);
}

// The full reconcile and the fast path agree wherever the ConfigMap is already set to the
// attempt (the fast path only fills in the id of such a ConfigMap).
TEST(PublishRule, TheFullReconcileAndTheFastPathAgree) {
  struct Case {
    const char* what;
    std::vector<ObservedPod> pods;
    ObservedConfigMap cm;
  };
  ObservedPod terminating = Root(1, 1);
  terminating.terminating = true;
  std::vector<Case> cases = {
      {"all pods, root with the id", Pods(Root(1, 1), 1), ConfigMapAt(1)},
      {"a pod missing", Pods(Root(1, 1), 1, 3), ConfigMapAt(1)},
      {"no id yet", Pods(Root(1, 1, ""), 1), ConfigMapAt(1)},
      {"id of another attempt", Pods(Root(1, 0), 1), ConfigMapAt(1)},
      {"root being deleted", Pods(terminating, 1), ConfigMapAt(1)},
      {"already published", Pods(Root(1, 1), 1), ConfigMapAt(1, true)},
      {"a pod of another attempt left", Pods(Root(1, 1), 1), ConfigMapAt(1)},
  };
  cases.back().pods.push_back(testing::Pod(9, 0));
  cases.back().pods.back().name = "demo-extra";
  for (const Case& c : cases) {
    const bool fast = Fast(JobAt(1), c.pods, c.cm).publish.has_value();
    const bool full = Decide(JobAt(1), c.pods, c.cm, kNow).publish.has_value();
    EXPECT_EQ(fast, full) << c.what;
    EXPECT_EQ(full, DecidePublish(JobAt(1), JobAt(1).status, observed::ViewAttempt(c.pods, 1, 4), c.cm, kNow)
                        .publish.has_value())
        << c.what;
  }
  EXPECT_TRUE(Decide(JobAt(1), cases[0].pods, cases[0].cm, kNow).publish) << "the agreeing case publishes";
}

}  // namespace
}  // namespace ncclop::policy
