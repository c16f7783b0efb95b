// ObserveJob over the informers' stores: what it reads of a job's pods, and that a reconcile of a
// large job parses only the pods that changed since the last one (observed/pod_memo.h).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "contract/names.h"
#include "controller/observe.h"
#include "desired/pod.h"
#include "observed/ownership.h"
#include "observed/pod_memo.h"
#include "test_jobs.h"

namespace ncclop::controller {
namespace {

using Json = nlohmann::json;

// The pod of `index` as the cache holds it: pod 0 as the reconciler makes it, renamed for
// `index`, then `phase` (one desired::Pod per test keeps a 4096-pod test quick).
kube::ObjectPtr CachedPod(const api::NcclJob& job, int index, int attempt, const std::string& phase) {
  static std::map<std::pair<std::string, int>, Json> made;  // by job UID and replicas
  auto [it, fresh] = made.try_emplace({job.uid, job.spec.replicas});
  if (fresh) it->second = desired::Pod(job, 0, attempt, desired::PodOptions{});
  Json pod = it->second;
  pod["metadata"]["name"] = contract::PodName(job.name, index);
  pod["metadata"]["labels"][std::string(contract::kLabelIndex)] = std::to_string(index);
  pod["metadata"]["labels"][std::string(contract::kLabelAttempt)] = std::to_string(attempt);
  pod["metadata"]["resourceVersion"] = "1";
  pod["status"] = {{"phase", phase},
                   {"conditions", Json::array({{{"type", "Ready"}, {"status", phase == "Running" ? "True" : "False"}}})}};
  return std::make_shared<const Json>(std::move(pod));
}

struct Cluster {
  kube::Store jobs, pods, configmaps;
  observed::PodMemo memo;
  Cluster() {
    pods.AddIndex(kPodsByJob, [](const Json& pod) -> std::vector<std::string> {
      std::string job = observed::OwningJobKey(pod);
      if (job.empty()) return {};
      return {std::move(job)};
    });
  }
  Caches caches(bool with_memo) {
    Caches c{&jobs, &pods, &configmaps};
    c.pod_memo = with_memo ? &memo : nullptr;
    return c;
  }
};

// The facts the policies read, for comparing two observations.
std::string Facts(const observed::ObservedPod& p) {
  return p.name + " " + std::to_string(p.index) + " " + std::to_string(p.attempt) + " " + p.phase + " " +
         (p.ready ? "ready" : "-") + (p.terminating ? " terminating" : "") + (p.failed ? " failed" : "") + " " + p.unique_id;
}
std::multiset<std::string> AllFacts(const JobObservation& seen) {
  std::multiset<std::string> out;
  for (const auto& p : seen.pods) out.insert(Facts(p));
  return out;
}

TEST(ObserveJob, ALargeJobsReconcileParsesOnlyThePodsThatChanged) {
  constexpr int kReplicas = 4096;
  Cluster c;
  const api::NcclJob job = testing::Job(kReplicas, 1);
  c.jobs.Upsert(std::make_shared<const Json>(testing::JobJson(kReplicas, 1).patch(
      Json::array({{{"op", "add"}, {"path", "/status"}, {"value", {{"attempt", 1}}}}}))));
  for (int i = 0; i < kReplicas; ++i) c.pods.Upsert(CachedPod(job, i, 1, "Pending"));

  auto first = ObserveJob(c.caches(true), "ml/demo");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->pods.size(), static_cast<std::size_t>(kReplicas));
  EXPECT_EQ(c.memo.parses(), static_cast<std::uint64_t>(kReplicas)) << "the first read parses every pod once";

  // Three pod events since: two pods run, one more is deleted; a reconcile parses those two.
  c.pods.Upsert(CachedPod(job, 7, 1, "Running"));
  c.pods.Upsert(CachedPod(job, 4000, 1, "Running"));
  c.pods.Remove("ml/demo-9");
  auto second = ObserveJob(c.caches(true), "ml/demo");
  ASSERT_TRUE(second);
  EXPECT_EQ(c.memo.parses(), static_cast<std::uint64_t>(kReplicas) + 2) << "only the changed versions are parsed";
  EXPECT_EQ(second->pods.size(), static_cast<std::size_t>(kReplicas - 1));
  auto plain = ObserveJob(c.caches(false), "ml/demo");
  ASSERT_TRUE(plain);
  EXPECT_EQ(AllFacts(*second), AllFacts(*plain)) << "the memo sees what a fresh parse of every pod sees";

  // Nothing changed: nothing is parsed.
  ASSERT_TRUE(ObserveJob(c.caches(true), "ml/demo"));
  EXPECT_EQ(c.memo.parses(), static_cast<std::uint64_t>(kReplicas) + 2);
}

TEST(ObserveJob, ANewTrainerContainerOrANewJobOfTheSameNameIsReadAfresh) {
  Cluster c;
  const api::NcclJob job = testing::Job(4, 1);
  c.jobs.Upsert(std::make_shared<const Json>(testing::JobJson(4, 1)));
  for (int i = 0; i < 4; ++i) c.pods.Upsert(CachedPod(job, i, 1, "Running"));
  for (bool with_memo : {true, false}) {
    auto seen = ObserveJob(c.caches(with_memo), "ml/demo");
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->pods.size(), 4u);
  }
  EXPECT_EQ(c.memo.parses(), 4u);
  // Its trainer container is another one: the pods are read again for it.
  Json renamed = testing::JobJson(4, 1);
  renamed["spec"]["template"]["metadata"]["annotations"]["nccl.dev/trainer-container"] = "logger";
  c.jobs.Upsert(std::make_shared<const Json>(renamed));
  auto seen = ObserveJob(c.caches(true), "ml/demo");
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->pods.size(), 4u);
  EXPECT_EQ(c.memo.parses(), 8u);
  // The job is deleted and made again under the same name: a new UID owns none of the old pods.
  Json again = testing::JobJson(4, 1);
  again["metadata"]["uid"] = "uid-2";
  c.jobs.Upsert(std::make_shared<const Json>(again));
  for (bool with_memo : {true, false}) {
    auto fresh = ObserveJob(c.caches(with_memo), "ml/demo");
    ASSERT_TRUE(fresh);
    EXPECT_TRUE(fresh->pods.empty()) << (with_memo ? "memo" : "plain");
  }
}

TEST(PodMemo, ForgetsReplacedVersionsAndForgottenJobs) {
  Cluster c;
  const api::NcclJob job = testing::Job(8, 1);
  c.jobs.Upsert(std::make_shared<const Json>(testing::JobJson(8, 1)));
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 8; ++i) c.pods.Upsert(CachedPod(job, i, 1, round % 2 ? "Running" : "Pending"));
    auto seen = ObserveJob(c.caches(true), "ml/demo");
    ASSERT_TRUE(seen);
    ASSERT_EQ(seen->pods.size(), 8u);
    for (const auto& p : seen->pods) ASSERT_EQ(p.phase, round % 2 ? "Running" : "Pending") << "round " << round;
  }
  EXPECT_EQ(c.memo.parses(), 50u * 8u) << "every new version is parsed, each once";
  c.memo.Forget("ml/demo");
  ASSERT_TRUE(ObserveJob(c.caches(true), "ml/demo"));
  EXPECT_EQ(c.memo.parses(), 50u * 8u + 8u) << "a forgotten job's pods are parsed again";
}

}  // namespace
}  // namespace ncclop::controller
