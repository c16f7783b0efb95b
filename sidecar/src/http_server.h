// The sidecar's HTTP/1.1 server: one thread serves every connection of one listening socket
// with epoll. A request that has to wait (the id long-poll) parks its connection instead of
// holding a thread, so waiting clients, clients that gave up, idle keep-alive connections and
// slow senders cannot keep the others from being answered:
//   - a parked request is dropped the moment its client closes the connection;
//   - a connection gets `idle_timeout` to start a request and `request_timeout` from its first
//     byte to the end of its body (then 408), however slowly the bytes come;
//   - at `max_connections` the longest-idle connection is closed for a new one; when none is
//     idle the new one is answered 503 at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "config.h"
#include "http_message.h"

namespace sidecar {

// A reply that is not known yet. `poll` is asked again after every Wake() and once more at the
// deadline (expired = true), when it must answer.
struct ParkedReply {
  std::chrono::steady_clock::time_point deadline;
  std::function<std::optional<HttpResponse>(bool expired)> poll;
};
using Reply = std::variant<HttpResponse, ParkedReply>;
using Handler = std::function<Reply(const HttpRequest&)>;

struct HttpServerLimits {
  size_t max_connections = 512;
  size_t max_head_bytes = 8192;
  size_t max_body_bytes = 4096;
  std::chrono::milliseconds request_timeout{5000};  // first byte to last byte of a request; a reply's write
  std::chrono::milliseconds idle_timeout{5000};     // a connection without a request in progress
};

class HttpServer {
 public:
  // `component` names the server in logs; `not_found` is the 404 message.
  HttpServer(std::string component, HttpServerLimits limits, std::string not_found);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Before Start(). Other methods on a handled path are answered 405 with Allow.
  void Handle(const std::string& method, const std::string& path, Handler handler);

  int Bind(const HostPort& address);  // the bound port (the kernel's choice for port 0), or -1
  void Start();                       // serves on its own thread until Stop()
  void Stop();                        // answers what is ready, closes every connection; idempotent

  void Wake();  // any thread: parked replies are asked again

  int parked() const { return parked_.load(); }
  int connections() const { return live_.load(); }

 private:
  enum class Phase { kIdle, kReading, kParked, kWriting };
  struct Connection;

  void Loop();
  void AcceptAll();
  void Admit(int fd);
  void OnEvent(Connection& c, uint32_t events);
  void ReadFrom(Connection& c);
  void Advance(Connection& c);
  bool Dispatch(Connection& c);
  std::optional<HttpResponse> Route(const RequestHead& head, const Handler** handler) const;
  void Respond(Connection& c, const HttpResponse& response, bool close);
  bool Flush(Connection& c);
  void Park(Connection& c, ParkedReply parked);
  void PollParked(Connection& c, bool expired);
  void ExpireDeadlines();
  void Close(Connection& c);
  void WatchWrites(Connection& c, bool on);
  bool EvictIdle();
  int NextTimeoutMs() const;

  const std::string component_;
  const HttpServerLimits limits_;
  const std::string not_found_;
  std::map<std::string, std::map<std::string, Handler>> routes_;  // path -> method -> handler

  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;   // eventfd: Wake() and Stop()
  int spare_fd_ = -1;  // given up to accept-and-refuse when the process is out of descriptors
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;  // loop thread only
  uint64_t next_id_ = 2;  // 0 and 1 tag the listening socket and the eventfd in epoll
  std::atomic<int> parked_{0};
  std::atomic<int> live_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace sidecar
