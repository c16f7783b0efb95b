#include "id_configmap.h"

#include <string>

#include <gtest/gtest.h>

#include "contract/unique_id.h"

namespace sidecar {
namespace {

nlohmann::json ConfigMap(nlohmann::json data) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "demo-nccl"}}}, {"data", data}};
}

const std::string kId(128, 'i');

TEST(ReadIdConfigMap, ReadsAttemptIdAndUid) {
  auto view = ReadIdConfigMap(ConfigMap({{"attempt", "2"}, {"uniqueId", contract::Base64Encode(kId)}, {"jobUID", "u"}}), "u");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->attempt, 2);
  EXPECT_EQ(view->id, kId);
  EXPECT_EQ(view->job_uid, "u");
  EXPECT_TRUE(view->problem.empty());
}

TEST(ReadIdConfigMap, ReadsTheListFormOfSeveralRootsInOrder) {
  const std::string a(128, 'a'), b(128, 'b'), c(128, 'c');
  auto view = ReadIdConfigMap(
      ConfigMap({{"attempt", "3"}, {"uniqueId", contract::Base64Encode(a) + "," + contract::Base64Encode(b) + "," + contract::Base64Encode(c)}}), "");
  ASSERT_TRUE(view);
  ASSERT_TRUE(view->id);
  EXPECT_EQ(SplitIds(*view->id), (std::vector<std::string>{a, b, c}));
}

TEST(ReadIdConfigMap, ABadIdInTheListIsNamedAndNoneIsTaken) {
  const std::string a(128, 'a');
  for (const std::string& list : {contract::Base64Encode(a) + "," + contract::Base64Encode("short"), contract::Base64Encode(a) + ",", "," + contract::Base64Encode(a),
                                  contract::Base64Encode(a) + ",,"  + contract::Base64Encode(a)}) {
    auto view = ReadIdConfigMap(ConfigMap({{"attempt", "3"}, {"uniqueId", list}}), "");
    ASSERT_TRUE(view);
    EXPECT_FALSE(view->id) << list;
    EXPECT_NE(view->problem.find("of data.uniqueId"), std::string::npos) << view->problem;
  }
}

TEST(ReadIdConfigMap, AttemptBeforeTheIdIsPublished) {
  auto view = ReadIdConfigMap(ConfigMap({{"attempt", "1"}, {"jobUID", "u"}}), "");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->attempt, 1);
  EXPECT_FALSE(view->id);
  view = ReadIdConfigMap(ConfigMap({{"attempt", "1"}, {"uniqueId", ""}}), "");
  ASSERT_TRUE(view);
  EXPECT_FALSE(view->id);
}

TEST(ReadIdConfigMap, NothingUsable) {
  std::string why;
  EXPECT_FALSE(ReadIdConfigMap(nlohmann::json{{"metadata", {{"name", "x"}}}}, "", &why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(ReadIdConfigMap(ConfigMap(nlohmann::json::object()), ""));
  EXPECT_FALSE(ReadIdConfigMap(ConfigMap({{"attempt", "0"}}), ""));
  EXPECT_FALSE(ReadIdConfigMap(ConfigMap({{"attempt", "x1"}}), ""));
  EXPECT_FALSE(ReadIdConfigMap(ConfigMap({{"attempt", 1}}), ""));  // ConfigMap data is strings
}

TEST(ReadIdConfigMap, IgnoresAnotherJobsConfigMap) {
  std::string why;
  EXPECT_FALSE(ReadIdConfigMap(ConfigMap({{"attempt", "5"}, {"jobUID", "old"}}), "new", &why));
  EXPECT_NE(why.find("jobUID"), std::string::npos);
}

TEST(ReadIdConfigMap, MalformedIdKeepsTheAttemptButNotTheId) {
  auto view = ReadIdConfigMap(ConfigMap({{"attempt", "2"}, {"uniqueId", contract::Base64Encode("short")}}), "");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->attempt, 2);
  EXPECT_FALSE(view->id);
  EXPECT_NE(view->problem.find("5 bytes"), std::string::npos);
  view = ReadIdConfigMap(ConfigMap({{"attempt", "2"}, {"uniqueId", "@@@@"}}), "");
  ASSERT_TRUE(view);
  EXPECT_FALSE(view->id);
  EXPECT_FALSE(view->problem.empty());
}

}  // namespace
}  // namespace sidecar
