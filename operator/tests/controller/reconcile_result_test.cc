// ReconcileResult::FromWriteOfCached: what a write of a cached object's answer means to the work loop.
#include "controller/reconcile_result.h"

#include <gtest/gtest.h>

namespace ncclop::controller {
namespace {

using Outcome = ReconcileResult::Outcome;

TEST(ReconcileResult, AWriteOfAnObjectDeletedMeanwhileIsAStaleCacheNotAFailure) {
  // The job deleted while its reconcile ran: its status write answers 404. Before, this was an
  // Error: "reconcile failed; will retry" in the log and a rate-limited retry for a job that is gone.
  auto r = ReconcileResult::FromWriteOfCached(kube::Status::Http(404, "NotFound", "nccljobs \"a\" not found"), "NcclJob");
  EXPECT_EQ(r.outcome(), Outcome::kStaleCache);
  EXPECT_NE(r.status().ToString().find("NcclJob was deleted"), std::string::npos) << r.status().ToString();
}

TEST(ReconcileResult, AConflictIsAStaleCache) {
  auto r = ReconcileResult::FromWriteOfCached(kube::Status::Http(409, "Conflict", "modified"), "ConfigMap");
  EXPECT_EQ(r.outcome(), Outcome::kStaleCache);
  EXPECT_NE(r.status().ToString().find("ConfigMap changed since it was cached"), std::string::npos);
}

TEST(ReconcileResult, OtherAnswersKeepTheirMeaning) {
  EXPECT_EQ(ReconcileResult::FromWriteOfCached(kube::Status::Ok(), "NcclJob").outcome(), Outcome::kDone);
  auto forbidden = ReconcileResult::FromWriteOfCached(kube::Status::Http(403, "Forbidden", "no"), "NcclJob");
  EXPECT_EQ(forbidden.outcome(), Outcome::kError);
  EXPECT_EQ(forbidden.status().code(), 403);
  auto exists = ReconcileResult::FromWriteOfCached(kube::Status::Http(409, "AlreadyExists", "x"), "ConfigMap");
  EXPECT_EQ(exists.outcome(), Outcome::kError);
}

}  // namespace
}  // namespace ncclop::controller
