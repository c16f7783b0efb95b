#include "http_message.h"

#include <gtest/gtest.h>

namespace sidecar {
namespace {

ParsedHead MustParse(std::string_view text) {
  auto parsed = ParseRequestHead(text, 8192);
  EXPECT_TRUE(std::holds_alternative<ParsedHead>(parsed)) << text;
  return std::holds_alternative<ParsedHead>(parsed) ? std::get<ParsedHead>(parsed) : ParsedHead{};
}

int ErrorStatus(std::string_view text, size_t max = 8192) {
  auto parsed = ParseRequestHead(text, max);
  return std::holds_alternative<HeadError>(parsed) ? std::get<HeadError>(parsed).status : 0;
}

TEST(HttpMessage, ParsesAGetWithItsQuery) {
  std::string text = "GET /v1/id?timeout=60&x=a%20b+c HTTP/1.1\r\nHost: h\r\nX-Thing:  v \r\n\r\nrest";
  ParsedHead p = MustParse(text);
  EXPECT_EQ(p.size, text.size() - 4);
  EXPECT_EQ(p.head.method, "GET");
  EXPECT_EQ(p.head.path, "/v1/id");
  EXPECT_EQ(p.head.Param("timeout"), "60");
  EXPECT_EQ(p.head.Param("x"), "a b c");
  EXPECT_EQ(p.head.Param("absent"), std::nullopt);
  EXPECT_EQ(p.head.Header("x-THING"), "v");
  EXPECT_EQ(p.head.content_length, 0u);
  EXPECT_TRUE(p.head.keep_alive);
}

TEST(HttpMessage, WaitsForTheWholeHead) {
  EXPECT_TRUE(std::holds_alternative<HeadIncomplete>(ParseRequestHead("GET / HTTP/1.1\r\nHost: h\r\n", 8192)));
  EXPECT_TRUE(std::holds_alternative<HeadIncomplete>(ParseRequestHead("", 8192)));
}

TEST(HttpMessage, AcceptsBareLineFeedsAndLeadingEmptyLines) {
  ParsedHead p = MustParse("\r\nPOST /v1/id HTTP/1.1\nContent-Length: 5\n\nhello");
  EXPECT_EQ(p.head.method, "POST");
  EXPECT_EQ(p.head.content_length, 5u);
}

TEST(HttpMessage, ConnectionAndExpect) {
  EXPECT_FALSE(MustParse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(MustParse("GET / HTTP/1.0\r\n\r\n").head.keep_alive);
  EXPECT_TRUE(MustParse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").head.keep_alive);
  EXPECT_TRUE(MustParse("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").head.expect_continue);
}

TEST(HttpMessage, RefusesWhatItCannotServe) {
  EXPECT_EQ(ErrorStatus("GET /\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(ErrorStatus("G(T / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nno colon\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: ten\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 501);
}

TEST(HttpMessage, AHeadOverTheLimitIsRefusedBeforeItEnds) {
  std::string endless = "GET / HTTP/1.1\r\nX: " + std::string(100, 'a');
  EXPECT_EQ(ErrorStatus(endless, 64), 431);
  EXPECT_EQ(ErrorStatus(endless + "\r\n\r\n", 64), 431);
}

TEST(HttpMessage, SerializesResponses) {
  HttpResponse ok{200, "application/json", "{}", {{"Allow", "GET"}}};
  EXPECT_EQ(SerializeResponse(ok, false),
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nAllow: GET\r\n\r\n{}");
  EXPECT_EQ(SerializeResponse(HttpResponse{204, "", "ignored", {}}, true),
            "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace sidecar
