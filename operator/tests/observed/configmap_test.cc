#include "observed/configmap.h"

#include <gtest/gtest.h>

namespace ncclop::observed {
namespace {

using Json = nlohmann::json;

TEST(ObserveConfigMap, ReadsTheJobUid) {
  ObservedConfigMap cm = ObserveConfigMap(Json::parse(R"({"data":{"attempt":"2","jobUID":"uid-1","uniqueId":"QUJD"}})"));
  EXPECT_EQ(cm.job_uid, "uid-1");
  EXPECT_EQ(cm.attempt, 2);
  EXPECT_TRUE(cm.has_id);
  EXPECT_TRUE(cm.Published(2));
  EXPECT_FALSE(cm.Published(3));
  const Json text = Json::parse(R"({"data":{"attempt":"2","jobUID":"uid-1","uniqueId":"QUJD"}})");
  EXPECT_TRUE(observed::ObserveConfigMapOf(text, "uid-1").exists);
  EXPECT_FALSE(observed::ObserveConfigMapOf(text, "uid-of-a-new-job").exists) << "a deleted job's reads as absent";
}

}  // namespace
}  // namespace ncclop::observed
