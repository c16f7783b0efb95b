#include "id_request.h"

#include <string>

#include <gtest/gtest.h>

#include "contract/unique_id.h"

namespace sidecar {
namespace {

std::string SomeId() {
  std::string id(kUniqueIdBytes, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(i * 7);
  return id;
}

int StatusOf(const std::variant<PostedId, HttpError>& r) {
  return std::holds_alternative<HttpError>(r) ? std::get<HttpError>(r).status : 200;
}

TEST(ParsePostBody, AcceptsTheRaw128Bytes) {
  auto r = ParsePostBody("application/octet-stream", SomeId(), 1);
  ASSERT_EQ(StatusOf(r), 200);
  EXPECT_EQ(std::get<PostedId>(r).id, SomeId());
  EXPECT_FALSE(std::get<PostedId>(r).attempt);
  EXPECT_EQ(StatusOf(ParsePostBody("", SomeId(), 1)), 200);  // no content type: raw
}

TEST(ParsePostBody, RawOfAnotherSizeIs400AndSaysTheSize) {
  auto r = ParsePostBody("application/octet-stream", SomeId() + "x", 1);
  ASSERT_EQ(StatusOf(r), 400);
  EXPECT_NE(std::get<HttpError>(r).message.find("129"), std::string::npos);
  EXPECT_EQ(StatusOf(ParsePostBody("application/octet-stream", "", 1)), 400);
}

TEST(ParsePostBody, OverTheLimitIs413) {
  EXPECT_EQ(StatusOf(ParsePostBody("application/octet-stream", std::string(kMaxPostBodyBytes + 1, 'a'), 1)), 413);
}

TEST(ParsePostBody, AcceptsTheJsonForm) {
  std::string body = R"({"id":")" + contract::Base64Encode(SomeId()) + R"(","attempt":3})";
  auto r = ParsePostBody("application/json; charset=utf-8", body, 3);
  ASSERT_EQ(StatusOf(r), 200);
  EXPECT_EQ(std::get<PostedId>(r).id, SomeId());
  EXPECT_EQ(std::get<PostedId>(r).attempt, 3);
  EXPECT_EQ(StatusOf(ParsePostBody("Application/JSON", R"({"id":")" + contract::Base64Encode(SomeId()) + "\"}", 3)), 200);
}

TEST(ParsePostBody, JsonAttemptOfAnotherAttemptIs409) {
  std::string body = R"({"id":")" + contract::Base64Encode(SomeId()) + R"(","attempt":2})";
  EXPECT_EQ(StatusOf(ParsePostBody("application/json", body, 3)), 409);
}

TEST(ParsePostBody, BadJsonIs400) {
  EXPECT_EQ(StatusOf(ParsePostBody("application/json", "{", 1)), 400);
  EXPECT_EQ(StatusOf(ParsePostBody("application/json", "[]", 1)), 400);
  EXPECT_EQ(StatusOf(ParsePostBody("application/json", R"({"attempt":1})", 1)), 400);
  EXPECT_EQ(StatusOf(ParsePostBody("application/json", R"({"id":5})", 1)), 400);
  EXPECT_EQ(StatusOf(ParsePostBody("application/json", R"({"id":"not base64!"})", 1)), 400);
  EXPECT_EQ(StatusOf(ParsePostBody("application/json", R"({"id":"Zm9v"})", 1)), 400);  // 3 bytes
  std::string body = R"({"id":")" + contract::Base64Encode(SomeId()) + R"(","attempt":"1"})";
  EXPECT_EQ(StatusOf(ParsePostBody("application/json", body, 1)), 400);
}

TEST(ParsePostBody, ErrorMessagesNeverContainTheId) {
  std::string encoded = contract::Base64Encode(SomeId() + "extra");
  auto r = ParsePostBody("application/json", R"({"id":")" + encoded + "\"}", 1);
  ASSERT_EQ(StatusOf(r), 400);
  EXPECT_EQ(std::get<HttpError>(r).message.find(encoded.substr(0, 16)), std::string::npos);
}

TEST(ParsePollTimeout, DefaultsClampsAndRefuses) {
  using std::chrono::seconds;
  EXPECT_EQ(std::get<seconds>(ParsePollTimeout(std::nullopt)), kDefaultPollTimeout);
  EXPECT_EQ(std::get<seconds>(ParsePollTimeout("0")), seconds(0));
  EXPECT_EQ(std::get<seconds>(ParsePollTimeout("12")), seconds(12));
  EXPECT_EQ(std::get<seconds>(ParsePollTimeout("301")), kMaxPollTimeout);
  EXPECT_TRUE(std::holds_alternative<HttpError>(ParsePollTimeout("")));
  EXPECT_TRUE(std::holds_alternative<HttpError>(ParsePollTimeout("-1")));
  EXPECT_TRUE(std::holds_alternative<HttpError>(ParsePollTimeout("1.5")));
  EXPECT_TRUE(std::holds_alternative<HttpError>(ParsePollTimeout("ten")));
}

}  // namespace
}  // namespace sidecar
