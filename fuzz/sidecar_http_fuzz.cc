// Whole HTTP requests (any bytes) through the sidecar's id API server on loopback, as a trainer
// or anything else in the pod could send them. The server is the root of attempt 1 with that
// attempt's id already on the board, so no GET waits. Property: the server answers each
// connection with nothing or with well-formed HTTP/1.1 status lines (never hangs: a reply must
// come within the deadline), and it keeps serving.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "api_server.h"
#include "config.h"
#include "id_board.h"
#include "id_source.h"
#include "logging/log.h"

namespace {

// Keeps every posted id at once and feeds the board nothing: the board is filled up front.
class KeepsAtOnce : public sidecar::IdSource {
 public:
  void Start() override {}
  void Stop() override {}
  bool Ready() const override { return true; }
  void Keep(int64_t, const std::string&) override {}
};

struct Server {
  sidecar::Config config;
  sidecar::IdBoard board;
  KeepsAtOnce source;
  std::unique_ptr<sidecar::ApiServer> api;
  int port = -1;

  Server() {
    logging::Configure(logging::Format::kText, logging::Level::kError);
    config.job = "fuzz";
    config.name_space = "default";
    config.replicas = 2;
    config.world_size = 2;
    config.attempt = 1;
    board.Observe(1, std::string(128, '\x07'));
    api = std::make_unique<sidecar::ApiServer>(config, board, source);
    port = api->Bind({"127.0.0.1", 0});
    if (port <= 0) std::abort();
    api->Start();
  }
};

Server& TheServer() {
  static Server* server = new Server();  // never destroyed: libFuzzer exits without unwinding
  return *server;
}

// Sends the bytes, closes the sending side, and reads until the server closes.
std::string Exchange(int port, std::string_view request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // At thousands of connections a second one source address runs out of ports (the server closes
  // first, so each connection holds its pair of ports in TIME_WAIT for a minute): that is the
  // fuzzer's doing, so the client takes its source address in turn from 127.0.0.1-127.0.3.254.
  // Any failure to connect then means the server stopped serving.
  static unsigned next_source = 0;
  sockaddr_in source{};
  source.sin_family = AF_INET;
  const unsigned n = next_source++ % 1016;
  source.sin_addr.s_addr = htonl((127u << 24) | ((n / 254) << 8) | (n % 254 + 1));
  if (bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
    std::fprintf(stderr, "bind: %s\n", std::strerror(errno));
    std::abort();
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    // libFuzzer's timer signal can interrupt a connect on a loaded machine; it then completes
    // on its own: wait for it and read its outcome.
    int error = errno;
    if (error == EINTR) {
      pollfd p{fd, POLLOUT, 0};
      socklen_t len = sizeof error;
      while (poll(&p, 1, 10000) < 0 && errno == EINTR) {
      }
      error = (p.revents & POLLOUT) && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 ? error : ETIMEDOUT;
    }
    if (error != 0) {
      std::fprintf(stderr, "connect: %s\n", std::strerror(error));
      std::abort();  // must keep serving
    }
  }
  while (!request.empty()) {
    ssize_t n = send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server may close early (e.g. 413)
    request.remove_prefix(static_cast<size_t>(n));
  }
  shutdown(fd, SHUT_WR);
  std::string reply;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) std::abort();  // the server hung on this input
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;  // libFuzzer's timer signal
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Server& server = TheServer();
  const std::string reply = Exchange(server.port, std::string_view(reinterpret_cast<const char*>(data), size));
  if (!reply.empty() && reply.rfind("HTTP/1.1 ", 0) != 0) std::abort();
  if (!reply.empty() && (reply.size() < 12 || reply[9] < '1' || reply[9] > '5')) std::abort();
  return 0;
}
