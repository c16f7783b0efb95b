#include "metrics/job_samples.h"

#include <gtest/gtest.h>

namespace ncclop::metrics {
namespace {

const api::Time kNow = *api::ParseTime("2026-12-05T10:00:00Z");

nlohmann::json Job(const std::string& state, const std::string& admitted_reason, const std::string& since) {
  nlohmann::json job = {{"metadata", {{"name", "train"}, {"namespace", "team-a"}}},
                        {"status", {{"state", state}, {"restarts", 4}}}};
  if (!admitted_reason.empty()) {
    job["status"]["conditions"] = nlohmann::json::array(
        {{{"type", "Running"}, {"status", "False"}, {"reason", admitted_reason}, {"lastTransitionTime", since}},
         {{"type", "Admitted"}, {"status", "False"}, {"reason", admitted_reason}, {"lastTransitionTime", since}}});
  }
  return job;
}

TEST(JobSamples, RestartsAndTheWaitForAdmission) {
  auto sample = SampleJob(Job("Pending", "WaitingForAdmission", "2026-12-05T09:30:00Z"), kNow);
  ASSERT_TRUE(sample);
  EXPECT_EQ(sample->namespace_, "team-a");
  EXPECT_EQ(sample->name, "train");
  EXPECT_EQ(sample->restarts, 4);
  ASSERT_TRUE(sample->waiting_for_admission_seconds);
  EXPECT_EQ(*sample->waiting_for_admission_seconds, 1800);
  auto no_class = SampleJob(Job("Pending", "PriorityClassNotFound", "2026-12-05T09:59:00Z"), kNow);
  ASSERT_TRUE(no_class && no_class->waiting_for_admission_seconds);
  EXPECT_EQ(*no_class->waiting_for_admission_seconds, 60);
}

TEST(JobSamples, NoWaitWhenAdmittedSuspendedFinishedOrNotQueued) {
  EXPECT_FALSE(SampleJob(Job("Running", "", ""), kNow)->waiting_for_admission_seconds);
  EXPECT_FALSE(SampleJob(Job("Suspended", "WaitingForAdmission", "2026-12-05T09:30:00Z"), kNow)
                   ->waiting_for_admission_seconds);
  EXPECT_FALSE(
      SampleJob(Job("Failed", "WaitingForAdmission", "2026-12-05T09:30:00Z"), kNow)->waiting_for_admission_seconds);
  auto admitted = Job("Running", "Admitted", "2026-12-05T09:30:00Z");
  admitted["status"]["conditions"][1]["status"] = "True";
  EXPECT_FALSE(SampleJob(admitted, kNow)->waiting_for_admission_seconds);
  EXPECT_FALSE(SampleJob(nlohmann::json{{"metadata", {{"namespace", "x"}}}}, kNow)) << "no name, no series";
  EXPECT_EQ(SampleJob(nlohmann::json{{"metadata", {{"name", "new"}, {"namespace", "x"}}}}, kNow)->restarts, 0);
}

TEST(JobSamples, RenderedWithTheJobsNamespaceAndName) {
  std::string out;
  RenderJobSamples({{"team-a", "train", 4, 1800.4}, {"team-b", "eval", 0, std::nullopt}}, &out);
  EXPECT_NE(out.find("ncclop_job_restarts_total{namespace=\"team-a\",nccljob=\"train\"} 4\n"), std::string::npos) << out;
  EXPECT_NE(out.find("ncclop_job_restarts_total{namespace=\"team-b\",nccljob=\"eval\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_job_waiting_for_admission_seconds{namespace=\"team-a\",nccljob=\"train\"} 1800\n"),
            std::string::npos);
  EXPECT_EQ(out.find("waiting_for_admission_seconds{namespace=\"team-b\""), std::string::npos);
}

}  // namespace
}  // namespace ncclop::metrics
