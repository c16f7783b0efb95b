// The RAS client against a loopback server written here, which speaks NCCL's side of the
// protocol (src/ras/client_support.cc, rasClientEventLoop) or misbehaves on purpose.
#include "ras_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ras_fixtures.h"

namespace sidecar {
namespace {

using std::chrono::milliseconds;

// A socket bound to a free loopback port; listening only when asked.
int BoundSocket(bool listening, int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  if (listening) {
    EXPECT_EQ(::listen(fd, 16), 0);
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

// NCCL's side of one connection: reads the commands the client sends, line by line.
class Peer {
 public:
  explicit Peer(int fd) : fd_(fd) {}
  // The next command without its newline; "" when the client closed the connection.
  std::string ReadLine() {
    for (;;) {
      if (auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      char chunk[512];
      ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  void Send(const std::string& text) { ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL); }

 private:
  int fd_;
  std::string buffer_;
};

// Accepts connections on a free loopback port and hands each to `script`, which returns when
// NCCL would close the connection. Records every command received.
class TestRasServer {
 public:
  using Script = std::function<void(Peer& peer, TestRasServer& server)>;
  explicit TestRasServer(Script script) : script_(std::move(script)) {
    listener_ = BoundSocket(/*listening=*/true, &port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TestRasServer() {
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }
  RasClientOptions Options() const {
    RasClientOptions options;
    options.host = "127.0.0.1";
    options.port = port_;
    options.deadline = milliseconds(2000);
    return options;
  }
  std::string Expect(Peer& peer) {
    std::string line = peer.ReadLine();
    std::lock_guard lock(mu_);
    received_.push_back(line);
    return line;
  }
  std::vector<std::string> received() {
    std::lock_guard lock(mu_);
    return received_;
  }

 private:
  void Serve() {
    for (;;) {
      int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      Peer peer(fd);
      script_(peer, *this);
      ::close(fd);
    }
  }
  Script script_;
  int listener_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> received_;  // guarded by mu_
  std::thread thread_;
};

// NCCL 2.28.7 and later: the handshake, SET FORMAT json, then STATUS answered and closed.
void NcclWithJson(Peer& peer, TestRasServer& server) {
  if (server.Expect(peer).rfind("CLIENT PROTOCOL ", 0) != 0) return;
  peer.Send("SERVER PROTOCOL 2\n");
  if (server.Expect(peer) != "SET FORMAT json") return;
  peer.Send("OK\n");
  if (server.Expect(peer) != "STATUS") return;
  std::string answer = ras_fixtures::kHealthy2289;
  peer.Send(answer.substr(0, 100));  // in two pieces, as a long answer comes
  std::this_thread::sleep_for(milliseconds(20));
  peer.Send(answer.substr(100));
}

TEST(RasClient, AsksForJsonAndReadsTheWholeAnswer) {
  TestRasServer server(NcclWithJson);
  RasAnswer answer = AskRas(server.Options());
  ASSERT_EQ(answer.kind, RasAnswer::Kind::kOk) << answer.error;
  EXPECT_EQ(answer.format, RasFormat::kJson);
  EXPECT_EQ(answer.server_protocol, "2");
  EXPECT_EQ(answer.body, ras_fixtures::kHealthy2289);
  EXPECT_EQ(server.received(), (std::vector<std::string>{"CLIENT PROTOCOL 2", "SET FORMAT json", "STATUS"}));
}

TEST(RasClient, TriesEveryAddressOfLocalhostAsNcclMayBindEither) {
  // NCCL binds the first address of "localhost"; this server has only 127.0.0.1, which may come
  // second (after ::1) in this machine's /etc/hosts.
  TestRasServer server(NcclWithJson);
  RasClientOptions options = server.Options();
  options.host = "localhost";
  RasAnswer answer = AskRas(options);
  ASSERT_EQ(answer.kind, RasAnswer::Kind::kOk) << answer.error;
  options.host = "[::1]";  // the IPv6 form is read too: nothing there, or not this server
  EXPECT_NE(AskRas(options).kind, RasAnswer::Kind::kOk);
}

TEST(RasClient, AnNcclBeforeJsonIsAskedForItsText) {
  // NCCL 2.24 to 2.28.3 know no SET FORMAT (rasClientEventLoop: "ERROR: Unknown command %s").
  TestRasServer server([](Peer& peer, TestRasServer& server) {
    server.Expect(peer);
    peer.Send("SERVER PROTOCOL 2\n");
    std::string command = server.Expect(peer);
    peer.Send("ERROR: Unknown command " + command + "\n");
    if (server.Expect(peer) == "STATUS") peer.Send(ras_fixtures::kText2289);
  });
  RasAnswer answer = AskRas(server.Options());
  ASSERT_EQ(answer.kind, RasAnswer::Kind::kOk) << answer.error;
  EXPECT_EQ(answer.format, RasFormat::kText);
  EXPECT_EQ(answer.body, ras_fixtures::kText2289);
  EXPECT_EQ(server.received().back(), "STATUS");
}

TEST(RasClient, AsksForTextWhenTold) {
  TestRasServer server([](Peer& peer, TestRasServer& server) {
    server.Expect(peer);
    peer.Send("SERVER PROTOCOL 2\n");
    if (server.Expect(peer) == "STATUS") peer.Send(ras_fixtures::kText2289);
  });
  RasClientOptions options = server.Options();
  options.json = false;
  RasAnswer answer = AskRas(options);
  ASSERT_EQ(answer.kind, RasAnswer::Kind::kOk) << answer.error;
  EXPECT_EQ(answer.format, RasFormat::kText);
  EXPECT_EQ(server.received(), (std::vector<std::string>{"CLIENT PROTOCOL 2", "STATUS"}));
}

TEST(RasClient, NothingListeningIsUnavailableAtOnce) {
  int port = 0;
  int fd = BoundSocket(/*listening=*/false, &port);  // holds the port so nobody else listens there
  RasClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  auto started = std::chrono::steady_clock::now();
  RasAnswer answer = AskRas(options);
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(500));
  ::close(fd);
  EXPECT_EQ(answer.kind, RasAnswer::Kind::kUnavailable);
  EXPECT_NE(answer.error.find("Connection refused"), std::string::npos) << answer.error;
}

TEST(RasClient, AListenerThatNeverAnswersCostsOnlyTheDeadline) {
  // A stopped NCCL process still holds its listening socket (SO_REUSEPORT: it may be the one the
  // kernel picks): the connection is made, and nothing ever comes back.
  int port = 0;
  int fd = BoundSocket(/*listening=*/true, &port);
  RasClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.deadline = milliseconds(300);
  auto started = std::chrono::steady_clock::now();
  RasAnswer answer = AskRas(options);
  auto took = std::chrono::steady_clock::now() - started;
  ::close(fd);
  EXPECT_EQ(answer.kind, RasAnswer::Kind::kFailed);
  EXPECT_NE(answer.error.find("no answer within 300 ms"), std::string::npos) << answer.error;
  EXPECT_GE(took, milliseconds(290));
  EXPECT_LT(took, milliseconds(1500));
}

TEST(RasClient, AStatusThatNeverEndsCostsOnlyTheDeadline) {
  TestRasServer server([](Peer& peer, TestRasServer& server) {
    server.Expect(peer);
    peer.Send("SERVER PROTOCOL 2\n");
    server.Expect(peer);
    peer.Send("OK\n");
    server.Expect(peer);
    peer.Send("{\n  \"nccl_version\": \"2.28.9\",\n");  // then RAS waits for its peers...
    peer.ReadLine();                                    // ...until the client gives up
  });
  RasClientOptions options = server.Options();
  options.deadline = milliseconds(300);
  RasAnswer answer = AskRas(options);
  EXPECT_EQ(answer.kind, RasAnswer::Kind::kFailed);
  EXPECT_NE(answer.error.find("status: no answer within 300 ms"), std::string::npos) << answer.error;
}

TEST(RasClient, SomethingElseOnThePortIsAFailure) {
  TestRasServer server([](Peer& peer, TestRasServer&) {
    peer.ReadLine();
    peer.Send("HTTP/1.1 400 Bad Request\r\n\r\n");
  });
  RasAnswer answer = AskRas(server.Options());
  EXPECT_EQ(answer.kind, RasAnswer::Kind::kFailed);
  EXPECT_NE(answer.error.find("not NCCL's RAS"), std::string::npos) << answer.error;
}

TEST(RasClient, AConnectionClosedInTheHandshakeIsAFailure) {
  TestRasServer server([](Peer& peer, TestRasServer&) { peer.ReadLine(); });
  RasAnswer answer = AskRas(server.Options());
  EXPECT_EQ(answer.kind, RasAnswer::Kind::kFailed);
  EXPECT_NE(answer.error.find("closed before a whole line"), std::string::npos) << answer.error;
}

TEST(RasClient, AnAnswerTooLongIsRefused) {
  TestRasServer server([](Peer& peer, TestRasServer& server) {
    server.Expect(peer);
    peer.Send("SERVER PROTOCOL 2\n");
    server.Expect(peer);
    peer.Send("OK\n");
    server.Expect(peer);
    peer.Send(std::string(64 * 1024, ' '));
  });
  RasClientOptions options = server.Options();
  options.max_bytes = 4096;
  RasAnswer answer = AskRas(options);
  EXPECT_EQ(answer.kind, RasAnswer::Kind::kFailed);
  EXPECT_NE(answer.error.find("longer than 4096 bytes"), std::string::npos) << answer.error;
}

}  // namespace
}  // namespace sidecar
