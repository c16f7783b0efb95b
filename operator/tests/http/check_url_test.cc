#include "http/check_url.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>

#include "http/server.h"

namespace ncclop::http {
namespace {

using std::chrono::milliseconds;

TEST(Get, AnswersWithTheCodeAndBody) {
  Server server;
  server.Handle("/readyz", [] { return Reply{200, "text/plain", "ok\n"}; });
  server.Handle("/metrics", [] { return Reply{503, "text/plain", "no\n"}; });
  ASSERT_TRUE(server.Start({"127.0.0.1", 0}).ok());
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());

  auto ready = Get(base + "/readyz", milliseconds(5000));
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  EXPECT_EQ(ready->code, 200);
  EXPECT_EQ(ready->body, "ok\n");
  auto unready = Get(base + "/metrics", milliseconds(5000));
  ASSERT_TRUE(unready.ok());
  EXPECT_EQ(unready->code, 503);
  auto root = Get(base, milliseconds(5000));
  ASSERT_TRUE(root.ok()) << "no path is /";
  EXPECT_EQ(root->code, 404);
  server.Stop();
}

TEST(Get, RefusesWhatIsNotAPlainHttpUrl) {
  for (const char* url : {"https://127.0.0.1:1/", "127.0.0.1:8081/readyz", "http://:8081/", "http://host:/"}) {
    auto got = Get(url, milliseconds(100));
    ASSERT_FALSE(got.ok()) << url;
    EXPECT_NE(got.status().ToString().find(url), std::string::npos) << got.status().ToString();
  }
}

TEST(Get, NamesTheStepThatFailed) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor silent(io, {boost::asio::ip::make_address("127.0.0.1"), 0});  // never accepts
  const std::string port = std::to_string(silent.local_endpoint().port());
  auto waited = Get("http://127.0.0.1:" + port + "/readyz", milliseconds(200));
  ASSERT_FALSE(waited.ok());
  EXPECT_NE(waited.status().ToString().find("read: no answer within 200 ms"), std::string::npos)
      << waited.status().ToString();
  silent.close();
  auto refused = Get("http://127.0.0.1:" + port + "/readyz", milliseconds(2000));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("connect: "), std::string::npos) << refused.status().ToString();
}

}  // namespace
}  // namespace ncclop::http
