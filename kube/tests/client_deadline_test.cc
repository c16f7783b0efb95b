// Per-call limits of Client::Request against a local TCP peer that misbehaves on purpose (it
// never answers, or answers 503 with a long Retry-After): transport behaviour only, so no
// API server is involved.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include "kube/client.h"
#include "kube/leader_election.h"

namespace kube {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Listens on 127.0.0.1:0. With `reply` empty it never accepts: the kernel completes the
// handshake and the request sits unanswered. Otherwise every connection gets `reply`.
class Peer {
 public:
  explicit Peer(std::string reply) : reply_(std::move(reply)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (!reply_.empty()) {
      thread_ = std::jthread([this](std::stop_token stop) {
        while (!stop.stop_requested()) {
          int c = accept(fd_, nullptr, nullptr);
          if (c < 0) return;
          char buf[4096];
          (void)!read(c, buf, sizeof(buf));
          (void)!write(c, reply_.data(), reply_.size());
          close(c);
        }
      });
    }
  }
  ~Peer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::jthread thread_;
};

Client MakeClient(const std::string& url) {
  Config config;
  config.server = url;
  ClientOptions options;
  options.request_timeout = milliseconds(30000);  // far longer than any limit under test
  options.backoff = {milliseconds(2000), milliseconds(20000), 2.0, 0.0};
  return Client(config, options);
}

TEST(ClientDeadlineTest, TimeoutEndsAHungRequest) {
  Peer peer("");
  Client client = MakeClient(peer.url());
  CallOptions call;
  call.timeout = milliseconds(300);
  const auto started = Clock::now();
  auto r = client.Request("GET", "/api/v1/namespaces/x/configmaps/y", {}, {}, call);
  const auto took = Clock::now() - started;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().reason(), "Timeout") << r.status().ToString();
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, milliseconds(3000));
}

// A call limited by what is left of a deadline of the caller's (leader election: the lease's
// renew deadline) names that deadline, not the remainder: "within 1 ms" said nothing.
TEST(ClientDeadlineTest, TimeoutNamesTheCallersDeadline) {
  Peer peer("");
  Client client = MakeClient(peer.url());
  CallOptions call;
  call.timeout = milliseconds(1);
  call.deadline_name = "the lease's renew deadline (renew_deadline 10000 ms)";
  auto r = client.Request("GET", "/apis/coordination.k8s.io/v1/namespaces/x/leases/y", {}, {}, call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().reason(), "Timeout") << r.status().ToString();
  EXPECT_NE(r.status().message().find("did not finish before the lease's renew deadline (renew_deadline 10000 ms)"),
            std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find("within 1 ms"), std::string::npos) << r.status().message();

  CallOptions plain;
  plain.timeout = milliseconds(200);
  auto p = client.Request("GET", "/api/v1/namespaces", {}, {}, plain);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("did not finish within 200 ms"), std::string::npos) << p.status().message();
}

TEST(ClientDeadlineTest, RetryWaitPastTheDeadlineIsNotTaken) {
  Peer peer("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 10\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  Client client = MakeClient(peer.url());
  CallOptions call;
  call.timeout = milliseconds(1000);
  const auto started = Clock::now();
  auto r = client.Request("GET", "/api/v1/namespaces", {}, {}, call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 503) << r.status().ToString();
  EXPECT_LT(Clock::now() - started, milliseconds(1000));
}

TEST(ClientDeadlineTest, StopCancelsTheRetryWait) {
  Peer peer("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 10\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  Client client = MakeClient(peer.url());
  std::stop_source source;
  CallOptions call;
  call.stop = source.get_token();
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(300));  // the thing under test is "stops soon after"
    source.request_stop();
  });
  const auto started = Clock::now();
  auto r = client.Request("GET", "/api/v1/namespaces", {}, {}, call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().reason(), "Cancelled") << r.status().ToString();
  EXPECT_LT(Clock::now() - started, milliseconds(3000));  // the Retry-After wait alone is 10 s
}

TEST(ClientDeadlineTest, StopCancelsAHungRequest) {
  Peer peer("");
  Client client = MakeClient(peer.url());
  std::stop_source source;
  CallOptions call;
  call.stop = source.get_token();
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(300));
    source.request_stop();
  });
  const auto started = Clock::now();
  auto r = client.Request("GET", "/api/v1/namespaces", {}, {}, call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().reason(), "Cancelled") << r.status().ToString();
  EXPECT_LT(Clock::now() - started, milliseconds(5000));
}

TEST(LeaderElectorDeadlineTest, StopEndsAHungLeaseCall) {
  Peer peer("");
  auto client = std::make_shared<Client>(Config{.server = peer.url()},
                                         ClientOptions{.request_timeout = milliseconds(30000)});
  LeaderElectionConfig config;
  config.lease_namespace = "ns";
  config.lease_name = "lease";
  config.identity = "me";
  config.renew_deadline = milliseconds(20000);
  LeaderElector elector(client, config);
  std::stop_source source;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(300));
    source.request_stop();
  });
  const auto started = Clock::now();
  EXPECT_TRUE(elector.Run(source.get_token()).ok());
  EXPECT_LT(Clock::now() - started, milliseconds(5000));  // not the 20 s deadline nor the 30 s timeout
  EXPECT_FALSE(elector.IsLeader());
}

}  // namespace
}  // namespace kube
