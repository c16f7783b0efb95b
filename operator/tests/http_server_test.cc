#include "http/server.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace ncclop::http {
namespace {

namespace bhttp = boost::beast::http;

bhttp::response<bhttp::string_body> Fetch(unsigned short port, bhttp::verb verb, const std::string& target) {
  boost::asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  bhttp::request<bhttp::empty_body> req{verb, target, 11};
  req.set(bhttp::field::host, "localhost");
  bhttp::write(stream, req);
  boost::beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(stream, buffer, res);
  return res;
}

TEST(ParseBindAddress, AcceptsTheUsualForms) {
  EXPECT_EQ(ParseBindAddress(":8080")->host, "0.0.0.0");
  EXPECT_EQ(ParseBindAddress(":8080")->port, 8080);
  EXPECT_EQ(ParseBindAddress("127.0.0.1:0")->host, "127.0.0.1");
  EXPECT_EQ(ParseBindAddress("[::1]:9")->host, "::1");
  EXPECT_EQ(ParseBindAddress("9090")->port, 9090);
  EXPECT_FALSE(ParseBindAddress("localhost:http").ok());
  EXPECT_FALSE(ParseBindAddress(":70000").ok());
}

TEST(Server, ServesRoutesAndRejectsTheRest) {
  Server server;
  int calls = 0;
  server.Handle("/metrics", [&] { return Reply{200, "text/plain; version=0.0.4", "x 1\n" + std::to_string(++calls)}; });
  server.Handle("/readyz", [] { return Reply{503, "text/plain", "no\n"}; });
  ASSERT_TRUE(server.Start({"127.0.0.1", 0}).ok());
  ASSERT_NE(server.port(), 0);

  auto metrics = Fetch(server.port(), bhttp::verb::get, "/metrics?x=1");
  EXPECT_EQ(metrics.result_int(), 200);
  EXPECT_EQ(metrics.body(), "x 1\n1");
  EXPECT_EQ(metrics[bhttp::field::content_type], "text/plain; version=0.0.4");
  EXPECT_EQ(Fetch(server.port(), bhttp::verb::get, "/readyz").result_int(), 503);
  EXPECT_EQ(Fetch(server.port(), bhttp::verb::get, "/nope").result_int(), 404);
  EXPECT_EQ(Fetch(server.port(), bhttp::verb::post, "/metrics").result_int(), 405);
  server.Stop();
}

TEST(Server, ReportsABusyPort) {
  Server first;
  ASSERT_TRUE(first.Start({"127.0.0.1", 0}).ok());
  Server second;
  kube::Status s = second.Start({"127.0.0.1", first.port()});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot listen"), std::string::npos);
}

}  // namespace
}  // namespace ncclop::http
