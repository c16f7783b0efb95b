#include "desired/rbac.h"

#include <gtest/gtest.h>

#include <string>

#include "desired/pod.h"
#include "test_jobs.h"

namespace ncclop::desired {
namespace {

api::NcclJob JobWithTemplateSpec(const std::string& field, const std::string& value) {
  Json object = testing::JobJson();
  object["spec"]["template"]["spec"][field] = value;
  return *api::ParseNcclJob(object);
}

TEST(Rbac, RoleGrantsOnlyTheJobsConfigMapAndRootPod) {
  auto job = testing::Job();
  Json role = Role(job);
  ASSERT_EQ(role["rules"].size(), 2u);
  EXPECT_EQ(role["rules"][0]["resourceNames"], Json::array({"demo-nccl"}));
  EXPECT_EQ(role["rules"][0]["verbs"], Json::array({"get", "list", "watch"}));
  EXPECT_EQ(role["rules"][1]["resourceNames"], Json::array({"demo-0"}));
  EXPECT_EQ(role["rules"][1]["verbs"], Json::array({"get", "patch"}));
  Json binding = RoleBinding(job);
  EXPECT_EQ(binding["roleRef"]["name"], "demo-nccl");
  EXPECT_EQ(binding["subjects"][0]["name"], ServiceAccount(job)["metadata"]["name"]);
  EXPECT_EQ(binding["subjects"][0]["namespace"], "ml");
}

TEST(Rbac, EveryBootstrapRootPodMayPatchItself) {
  auto job = testing::Job(8, 1);
  job.spec.bootstrap_roots = 3;  // blocks of 3, 3, 2 ranks: roots at pods 0, 3, 6
  job.spec.bootstrap_roots_set = true;
  EXPECT_EQ(Role(job)["rules"][1]["resourceNames"], Json::array({"demo-0", "demo-3", "demo-6"}));
}

TEST(Rbac, TheTemplatesServiceAccountIsKeptAndBound) {
  auto job = JobWithTemplateSpec("serviceAccountName", "trainer-irsa");
  EXPECT_FALSE(UsesJobServiceAccount(job));
  EXPECT_EQ(PodServiceAccountName(job), "trainer-irsa");
  EXPECT_EQ(RoleBinding(job)["subjects"], Json::array({{{"kind", "ServiceAccount"}, {"name", "trainer-irsa"},
                                                         {"namespace", "ml"}}}));
  EXPECT_EQ(RoleBinding(job)["roleRef"]["name"], "demo-nccl");
  Json pod = Pod(job, 1, 1, {});
  EXPECT_EQ(pod["spec"]["serviceAccountName"], "trainer-irsa");
  EXPECT_EQ(pod["spec"]["automountServiceAccountToken"], true);
}

TEST(Rbac, TheDeprecatedServiceAccountFieldCountsAndAnEmptyNameDoesNot) {
  auto old_style = JobWithTemplateSpec("serviceAccount", "legacy");
  EXPECT_EQ(PodServiceAccountName(old_style), "legacy");
  Json pod = Pod(old_style, 0, 1, {});
  EXPECT_EQ(pod["spec"]["serviceAccountName"], "legacy");
  EXPECT_FALSE(pod["spec"].contains("serviceAccount"));
  auto empty = JobWithTemplateSpec("serviceAccountName", "");
  EXPECT_TRUE(UsesJobServiceAccount(empty));
  EXPECT_EQ(PodServiceAccountName(empty), "demo-nccl");
  EXPECT_TRUE(UsesJobServiceAccount(testing::Job()));
}

}  // namespace
}  // namespace ncclop::desired
