#include "policy/pod_refusal.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

namespace ncclop::policy {
namespace {

using Json = nlohmann::json;

TEST(PodRefusal, OnlyTheApiServersOwnVerdictOnThePodIsPermanent) {
  auto status = [](long code, const std::string& body) { return kube::Status::FromResponse(code, body); };
  EXPECT_TRUE(IsMalformedPod(status(422, R"({"kind":"Status","reason":"Invalid","message":"Pod \"a-0\" is invalid: spec.containers[0].volumeMounts[0].name: Not found: \"data\"","details":{"name":"a-0","kind":"Pod"},"code":422})")));
  EXPECT_TRUE(IsMalformedPod(status(400, R"({"kind":"Status","reason":"BadRequest","message":"Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression","code":400})")));
  EXPECT_FALSE(IsMalformedPod(status(422, R"({"kind":"Status","reason":"Invalid","message":"admission webhook \"x.example\" denied the request: no","details":{"kind":"Pod"},"code":422})")));
  EXPECT_FALSE(IsMalformedPod(status(400, "<html>Request Header Or Cookie Too Large</html>")));
  EXPECT_FALSE(IsMalformedPod(status(422, "")));  // no Status body: no details.kind
  EXPECT_FALSE(IsMalformedPod(status(403, R"({"kind":"Status","reason":"Forbidden","message":"pods \"a-0\" is forbidden: exceeded quota","code":403})")));
  std::string long_message(10000, 'x');
  std::string cut = RefusalMessage("a-0", status(422, R"({"kind":"Status","reason":"Invalid","message":")" + long_message + R"("})"), 100);
  EXPECT_EQ(cut.size(), 103u);
  EXPECT_EQ(cut.rfind("the API server refused pod a-0: ", 0), 0u);
  // A multi-byte character at the cut is dropped whole, so the message stays valid UTF-8.
  std::string prefix = "the API server refused pod a-0: ";
  std::string accented = RefusalMessage("a-0", status(422, R"({"kind":"Status","message":")" + std::string(60, 'x') +
                                                            "\u00e9\u00e9\u00e9\u00e9" + R"("})"), prefix.size() + 61);
  EXPECT_EQ(accented, prefix + std::string(60, 'x') + "...");
  EXPECT_NO_THROW(Json(accented).dump());
}

TEST(PodRefusal, ARoundOfCreatesIsSummarisedByItsFirstRefusalAndLowestRefusedIndex) {
  auto status = [](long code, const std::string& body) { return kube::Status::FromResponse(code, body); };
  const kube::Status timeout = status(504, R"({"kind":"Status","reason":"Timeout","message":"slow","code":504})");
  const kube::Status quota = status(403, R"({"kind":"Status","reason":"Forbidden","message":"exceeded quota","code":403})");
  const kube::Status invalid = status(422, R"({"kind":"Status","reason":"Invalid","message":"bad","details":{"kind":"Pod"},"code":422})");
  CreateSummary none = SummarizeCreates({});
  EXPECT_TRUE(none.first_error.ok());
  EXPECT_EQ(none.errors, 0);
  EXPECT_FALSE(none.refused);

  CreateSummary errors = SummarizeCreates({{5, timeout}, {2, timeout}});
  EXPECT_EQ(errors.errors, 2);
  EXPECT_EQ(errors.first_error.code(), 504);
  EXPECT_FALSE(errors.refused) << "a timeout may pass: no refusal";

  // The refusal wins over an earlier error; the lowest refused index is reported whichever came first.
  CreateSummary refused = SummarizeCreates({{6, timeout}, {4, quota}, {1, invalid}});
  EXPECT_EQ(refused.errors, 3);
  EXPECT_EQ(refused.first_error.code(), 403);
  ASSERT_TRUE(refused.refused);
  EXPECT_EQ(refused.refused->index, 1);
  EXPECT_EQ(refused.refused->status.code(), 422);
  EXPECT_TRUE(IsRefusal(quota));
  EXPECT_FALSE(IsRefusal(timeout));
}

}  // namespace
}  // namespace ncclop::policy
