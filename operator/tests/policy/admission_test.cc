// What a job in a Kueue queue asks of its Workload: the evicted quota released, spec.active set
// on suspend and resume, the PodsReady condition as Kueue's own job integrations keep it.
#include "policy/admission.h"

#include <gtest/gtest.h>

#include "test_workloads.h"

namespace ncclop::policy {
namespace {

using Json = nlohmann::json;
using observed::ObservedKueueWorkload;
using observed::ObserveKueueWorkload;
using testing::Admitted;
using testing::kEvictedWorkload;
using testing::Pending;
using testing::WithPodsReady;

TEST(ReleasesEvictedQuota, OnlyWhenEvictedReservedAndEveryPodIsGone) {
  ObservedKueueWorkload evicted = ObserveKueueWorkload(Json::parse(kEvictedWorkload));
  EXPECT_TRUE(evicted.evicted);
  EXPECT_TRUE(evicted.quota_reserved);
  EXPECT_FALSE(evicted.admitted);
  EXPECT_TRUE(ReleasesEvictedQuota(evicted, /*job_finished=*/false, /*pods_left=*/false));
  EXPECT_FALSE(ReleasesEvictedQuota(evicted, false, /*pods_left=*/true)) << "the quota covers pods that still exist";
  EXPECT_FALSE(ReleasesEvictedQuota(evicted, /*job_finished=*/true, false)) << "a finished job marks it Finished instead";
  EXPECT_FALSE(ReleasesEvictedQuota(Admitted(), false, false)) << "not evicted";
  EXPECT_FALSE(ReleasesEvictedQuota(Pending(), false, false)) << "no reservation to clear";
  ObservedKueueWorkload released = evicted;
  released.quota_reserved = false;
  EXPECT_FALSE(ReleasesEvictedQuota(released, false, false)) << "cleared already (another reconcile, or before a restart)";
  EXPECT_FALSE(ReleasesEvictedQuota(ObservedKueueWorkload{}, false, false));
}

TEST(KueueWorkloadActiveFor, SuspendGivesTheAdmissionBackAndResumeTakesOnlyOurDeactivationBack) {
  ObservedKueueWorkload admitted = Admitted();
  EXPECT_EQ(KueueWorkloadActiveFor(admitted, /*suspend=*/true, false), false);
  EXPECT_EQ(KueueWorkloadActiveFor(admitted, /*suspend=*/false, false), std::nullopt);
  EXPECT_EQ(KueueWorkloadActiveFor(Pending(), true, false), false) << "a queued job leaves the queue while suspended";
  ObservedKueueWorkload ours = ObserveKueueWorkload(Json::parse(
      R"({"metadata":{"annotations":{"nccl.dev/suspended":"true"}},"spec":{"active":false},"status":{}})"));
  EXPECT_FALSE(ours.active);
  EXPECT_TRUE(ours.deactivated_for_suspend);
  EXPECT_EQ(KueueWorkloadActiveFor(ours, /*suspend=*/false, false), true);
  EXPECT_EQ(KueueWorkloadActiveFor(ours, /*suspend=*/true, false), std::nullopt) << "done already";
  ObservedKueueWorkload someone_elses = ObserveKueueWorkload(Json::parse(R"({"spec":{"active":false},"status":{}})"));
  EXPECT_EQ(KueueWorkloadActiveFor(someone_elses, false, false), std::nullopt) << "an admin's deactivation stays";
  EXPECT_EQ(KueueWorkloadActiveFor(admitted, true, /*job_finished=*/true), std::nullopt);
  EXPECT_EQ(KueueWorkloadActiveFor(ObservedKueueWorkload{}, true, false), std::nullopt);
}

TEST(PodsReadyFor, FollowsThePodsAsKueueIntegrationsDo) {
  // Admitted, not all ready: WaitForStart, once.
  auto start = PodsReadyFor(Admitted(), false, 3, 4);
  ASSERT_TRUE(start);
  EXPECT_EQ(*start, (KueuePodsReady{false, "WaitForStart", "Not all pods are ready or succeeded"}));
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Admitted(), "False", "WaitForStart"), false, 3, 4)) << "already said";
  // All ready: Started.
  auto started = PodsReadyFor(WithPodsReady(Admitted(), "False", "WaitForStart"), false, 4, 4);
  ASSERT_TRUE(started);
  EXPECT_TRUE(started->ready);
  EXPECT_EQ(started->reason, "Started");
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Admitted(), "True", "Started"), false, 4, 4)) << "no write while it holds";
  // A pod failed after the start: WaitForRecovery, and it stays so until all are ready again: Recovered.
  auto recovery = PodsReadyFor(WithPodsReady(Admitted(), "True", "Started"), false, 0, 4);
  ASSERT_TRUE(recovery);
  EXPECT_FALSE(recovery->ready);
  EXPECT_EQ(recovery->reason, "WaitForRecovery");
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Admitted(), "False", "WaitForRecovery"), false, 2, 4));
  auto recovered = PodsReadyFor(WithPodsReady(Admitted(), "False", "WaitForRecovery"), false, 4, 4);
  ASSERT_TRUE(recovered);
  EXPECT_EQ(recovered->reason, "Recovered");
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Admitted(), "True", "Recovered"), false, 4, 4));
  EXPECT_EQ(PodsReadyFor(WithPodsReady(Admitted(), "True", "Recovered"), false, 1, 4)->reason, "WaitForRecovery");
}

TEST(PodsReadyFor, NotAdmittedFinishedOrGoneWritesOnlyToUndoATrueCondition) {
  EXPECT_FALSE(PodsReadyFor(ObservedKueueWorkload{}, false, 4, 4)) << "no Workload";
  EXPECT_FALSE(PodsReadyFor(Pending(), false, 0, 4)) << "no write per queued job";
  EXPECT_FALSE(PodsReadyFor(WithPodsReady(Pending(), "False", "WaitForStart"), false, 0, 4));
  auto undo = PodsReadyFor(WithPodsReady(Pending(), "True", "Started"), false, 4, 4);
  ASSERT_TRUE(undo) << "evicted: ready pods of the old admission do not count";
  EXPECT_EQ(*undo, (KueuePodsReady{false, "WaitForStart", "Not all pods are ready or succeeded"}));
  EXPECT_FALSE(PodsReadyFor(Admitted(), true, 0, 4)) << "the job ended: Finished says it";
  ObservedKueueWorkload finished = Admitted();
  finished.finished = true;
  EXPECT_FALSE(PodsReadyFor(finished, false, 0, 4));
}

}  // namespace
}  // namespace ncclop::policy
