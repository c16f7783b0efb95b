#include "http/server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <vector>

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

// A flood of idle connections closes the oldest beyond the limit (bounded descriptors) and a
// probe arriving after it is still answered.
TEST(Server, IdleConnectionsBeyondTheLimitCloseTheOldestAndProbesStillGetAnswers) {
  constexpr std::size_t kLimit = 8;
  constexpr int kIdle = 20;
  Server server;
  server.SetMaxConnections(kLimit);
  server.Handle("/healthz", [] { return Reply{200, "text/plain", "ok\n"}; });
  ASSERT_TRUE(server.Start({"127.0.0.1", 0}).ok());

  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::socket> idle;
  for (int i = 0; i < kIdle; ++i) {
    idle.emplace_back(io);
    idle.back().connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
  }
  EXPECT_EQ(Fetch(server.port(), bhttp::verb::get, "/healthz").result_int(), 200);

  // The server closed the oldest ones (the probe took a slot too): a read on each ends (EOF or
  // reset) within 2 s, well before the server's 30 s request timeout would close any of them;
  // the newest ones are still open.
  const int evicted = kIdle - static_cast<int>(kLimit) + 1;
  for (int i = 0; i < kIdle; ++i) {
    int fd = idle[i].native_handle();
    char byte;
    if (i < evicted) {
      ::timeval timeout{2, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      ssize_t n = ::recv(fd, &byte, 1, 0);
      EXPECT_TRUE(n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) << "connection " << i;
    } else {
      ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
      EXPECT_TRUE(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) << "connection " << i;
    }
  }
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
