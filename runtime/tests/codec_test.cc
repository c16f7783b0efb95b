#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>

#include "flat_json.h"
#include "http_client.h"
#include "unique_id_codec.h"

namespace nccl_k8s {
namespace {

IdBytes SomeId() {
  IdBytes id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<unsigned char>(i * 37 + 11);
  return id;
}

// fuzz/base64's property (regression input regression-nonzero-padding-bits): an id's text
// ending "...fnb=" was read as the id whose text ends "...fnY=" (the codec's own cases are in
// contract/tests/base64_test.cc).
TEST(IdCodec, RefusesNonZeroBitsUnderThePadding) {
  IdBytes id = SomeId();
  std::string text = IdToBase64(id);
  ASSERT_EQ(text.back(), '=');
  text[text.size() - 2] = text[text.size() - 2] == 'A' ? 'B' : static_cast<char>(text[text.size() - 2] + 1);
  EXPECT_FALSE(IdFromBase64(text).has_value());
}

TEST(IdCodec, HexAndBase64RoundTrip) {
  IdBytes id = SomeId();
  EXPECT_EQ(IdToHex(id).size(), 256u);
  EXPECT_EQ(IdFromHex(IdToHex(id)), id);
  EXPECT_EQ(IdFromBase64(IdToBase64(id)), id);
  EXPECT_FALSE(IdFromHex("abc").has_value());
  EXPECT_FALSE(IdFromBase64("Zm9vYg==").has_value());  // not 128 bytes
}

TEST(IdCodec, DecodesTheBootstrapAddress) {
  IdBytes id{};
  uint64_t magic = 0x1234567890abcdefULL;
  std::memcpy(id.data(), &magic, sizeof magic);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(40123);
  inet_pton(AF_INET, "10.77.0.2", &sin.sin_addr);
  std::memcpy(id.data() + 8, &sin, sizeof sin);
  auto addr = DecodeBootstrapAddress(id);
  ASSERT_TRUE(addr.has_value());
  EXPECT_EQ(addr->ip, "10.77.0.2");
  EXPECT_EQ(addr->port, 40123);

  sockaddr_in6 sin6{};
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(5);
  inet_pton(AF_INET6, "fd00::9", &sin6.sin6_addr);
  std::memcpy(id.data() + 8, &sin6, sizeof sin6);
  addr = DecodeBootstrapAddress(id);
  ASSERT_TRUE(addr.has_value());
  EXPECT_EQ(addr->ip, "fd00::9");

  EXPECT_FALSE(DecodeBootstrapAddress(IdBytes{}).has_value());
}

TEST(FlatJson, ReadsTopLevelFields) {
  const char* body = R"({"id":"QUJD","attempt":3,"job":"demo","nested":{"attempt":9},"x":[1,"attempt"]})";
  EXPECT_EQ(JsonStringField(body, "id"), "QUJD");
  EXPECT_EQ(JsonIntField(body, "attempt"), 3);
  EXPECT_EQ(JsonStringField(body, "job"), "demo");
  EXPECT_FALSE(JsonIntField(body, "missing").has_value());
  EXPECT_FALSE(JsonStringField(body, "attempt").has_value());
  EXPECT_EQ(JsonIntField(R"({ "job" : "a,b:c" , "attempt" : 12 })", "attempt"), 12);
}

// Found by fuzz/runtime_http (regression input regression-status-not-three-digits): "4\xc90" was
// read as status 4, and a Content-Length or chunk size with trailing junk as its leading digits.
TEST(FlatJson, ReadsAnArrayOfStrings) {
  EXPECT_EQ(JsonStringArrayField(R"({"ids":["QUJD", "REVG"],"attempt":2})", "ids"),
            (std::vector<std::string>{"QUJD", "REVG"}));
  EXPECT_EQ(JsonStringArrayField(R"({"ids":[]})", "ids"), std::vector<std::string>{});
  EXPECT_FALSE(JsonStringArrayField(R"({"ids":"QUJD"})", "ids"));
  EXPECT_FALSE(JsonStringArrayField(R"({"ids":["QUJD",3]})", "ids"));
  EXPECT_FALSE(JsonStringArrayField(R"({"ids":["QUJD"})", "ids"));
  EXPECT_FALSE(JsonStringArrayField(R"({"x":{"ids":["QUJD"]}})", "ids")) << "top level only";
}

TEST(Http, RefusesStatusAndSizesThatAreNotNumbers) {
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 4x0 Gone\r\nContent-Length: 0\r\n\r\n").ok());
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n").ok());
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello").ok());
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3z\r\nabc\r\n0\r\n\r\n").ok());
  auto r = ParseHttpResponse("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 204);
}

TEST(Http, ParsesUrls) {
  auto u = ParseHttpUrl("http://127.0.0.1:8471");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8471);
  EXPECT_EQ(u->base_path, "");
  u = ParseHttpUrl("http://[::1]:9/api/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9);
  EXPECT_EQ(u->base_path, "/api");
  EXPECT_EQ(ParseHttpUrl("http://localhost")->port, 80);
  EXPECT_FALSE(ParseHttpUrl("https://x").ok());
  EXPECT_FALSE(ParseHttpUrl("http://x:99999").ok());
}

TEST(Http, ParsesResponses) {
  auto r = ParseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: y\r\n\r\nhello-extra");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello");
  r = ParseHttpResponse("HTTP/1.1 410 Gone\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 410);
  EXPECT_EQ(r->body, "abcde");
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort").ok());
  EXPECT_FALSE(ParseHttpResponse("garbage\r\n\r\n").ok());
}

}  // namespace
}  // namespace nccl_k8s
