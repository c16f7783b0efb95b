#include "http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "http_replies.h"
#include "logging/log.h"

namespace sidecar {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenTag = 0;
constexpr uint64_t kWakeTag = 1;
constexpr size_t kReadChunk = 4096;
// Connections over the limit that are kept only to be told 503 once their request arrived
// (closing at once could reset the connection before the client read the answer).
constexpr size_t kMaxRefusing = 64;

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Best effort for a connection that cannot be kept: the 503 and a close.
void RefuseNow(int fd) {
  char discard[kReadChunk];
  while (recv(fd, discard, sizeof(discard), MSG_DONTWAIT) > 0) {
  }
  std::string reply = SerializeResponse(ErrorReply(503, "too many connections; try again"), /*close=*/true);
  (void)!send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  shutdown(fd, SHUT_WR);
  close(fd);
}

}  // namespace

struct HttpServer::Connection {
  uint64_t id = 0;
  int fd = -1;
  Phase phase = Phase::kIdle;
  Clock::time_point deadline;
  std::string in;                    // received, not yet consumed
  std::string out;                   // to send
  std::optional<ParsedHead> head;    // the request whose body is still coming
  std::optional<ParkedReply> parked;
  bool keep_alive = true;            // of the request being answered
  bool close_after_write = false;
  bool peer_closed = false;          // the client sent FIN (or the connection broke)
  bool writes_watched = false;
  bool refuse = false;               // over the limit: 503 to its first request
  bool closed = false;               // fd closed; erased after the current round of events
};

HttpServer::HttpServer(std::string component, HttpServerLimits limits, std::string not_found)
    : component_(std::move(component)), limits_(limits), not_found_(std::move(not_found)) {}

HttpServer::~HttpServer() {
  Stop();
  for (int fd : {listen_fd_, epoll_fd_, wake_fd_, spare_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void HttpServer::Handle(const std::string& method, const std::string& path, Handler handler) {
  routes_[path][method] = std::move(handler);
}

int HttpServer::Bind(const HostPort& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string port = std::to_string(address.port);
  if (getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* ai = found; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return -1;
  sockaddr_storage bound{};
  socklen_t size = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size);
  int bound_port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                     : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  listen_fd_ = fd;
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return -1;
  epoll_event listen_event{EPOLLIN, {.u64 = kListenTag}};
  epoll_event wake_event{EPOLLIN, {.u64 = kWakeTag}};
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen_event);
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake_event);
  return bound_port;
}

void HttpServer::Start() {
  if (listen_fd_ < 0 || thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  Wake();
  thread_.join();
}

void HttpServer::Wake() {
  if (wake_fd_ < 0) return;
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void HttpServer::Loop() {
  epoll_event events[64];
  while (!stopping_) {
    int n = epoll_wait(epoll_fd_, events, 64, NextTimeoutMs());
    if (n < 0 && errno != EINTR) {
      logging::Error(component_, "epoll_wait failed; the server stops", {{"error", std::strerror(errno)}});
      break;
    }
    bool woken = false;
    for (int i = 0; i < n; ++i) {
      uint64_t tag = events[i].data.u64;
      if (tag == kListenTag) {
        AcceptAll();
      } else if (tag == kWakeTag) {
        uint64_t count = 0;
        (void)!read(wake_fd_, &count, sizeof(count));
        woken = true;
      } else if (auto it = connections_.find(tag); it != connections_.end() && !it->second->closed) {
        OnEvent(*it->second, events[i].events);
      }
    }
    if (woken) {
      for (auto& [id, c] : connections_) {
        if (!c->closed && c->phase == Phase::kParked) PollParked(*c, /*expired=*/false);
      }
    }
    ExpireDeadlines();
    std::erase_if(connections_, [](const auto& entry) { return entry.second->closed; });
  }
  // Answers what is ready (a closed id board answers every parked poll), then closes everything.
  for (auto& [id, c] : connections_) {
    if (!c->closed && c->phase == Phase::kParked) PollParked(*c, /*expired=*/false);
  }
  for (auto& [id, c] : connections_) {
    if (!c->closed) Close(*c);
  }
  connections_.clear();
}

int HttpServer::NextTimeoutMs() const {
  std::optional<Clock::time_point> next;
  for (const auto& [id, c] : connections_) {
    if (!c->closed && (!next || c->deadline < *next)) next = c->deadline;
  }
  if (!next) return -1;
  auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(wait, 0, 60'000));
}

void HttpServer::AcceptAll() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      Admit(fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if ((errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
      // Out of descriptors: the spare one makes room to tell one client so, instead of leaving
      // the listening socket readable forever.
      close(spare_fd_);
      fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) RefuseNow(fd);
      spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
      logging::Warn(component_, "out of file descriptors; refused a connection");
      continue;
    }
    return;  // EAGAIN, or an error the next readiness will show again
  }
}

void HttpServer::Admit(int fd) {
  size_t refusing = std::count_if(connections_.begin(), connections_.end(),
                                  [](const auto& e) { return !e.second->closed && e.second->refuse; });
  bool over = static_cast<size_t>(live_.load()) - refusing >= limits_.max_connections && !EvictIdle();
  if (over && refusing >= kMaxRefusing) {
    RefuseNow(fd);
    return;
  }
  if (over) logging::Debug(component_, "connection limit reached; refusing", {{"limit", std::to_string(limits_.max_connections)}});
  SetNoDelay(fd);
  auto c = std::make_unique<Connection>();
  c->id = next_id_++;
  c->fd = fd;
  c->refuse = over;
  c->deadline = Clock::now() + (over ? limits_.request_timeout : limits_.idle_timeout);
  epoll_event event{static_cast<uint32_t>(EPOLLIN | EPOLLRDHUP), {.u64 = c->id}};
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    close(fd);
    return;
  }
  ++live_;
  connections_.emplace(c->id, std::move(c));
}

bool HttpServer::EvictIdle() {
  Connection* oldest = nullptr;
  for (auto& [id, c] : connections_) {
    if (c->closed || c->refuse || c->phase != Phase::kIdle || !c->in.empty()) continue;
    char next = 0;
    if (recv(c->fd, &next, 1, MSG_PEEK | MSG_DONTWAIT) > 0) continue;  // its request is arriving
    if (!oldest || c->deadline < oldest->deadline) oldest = c.get();
  }
  if (!oldest) return false;
  Close(*oldest);
  return true;
}

void HttpServer::OnEvent(Connection& c, uint32_t events) {
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ReadFrom(c);
  if (c.closed) return;
  if (c.phase == Phase::kParked && c.peer_closed) {
    // The client gave up its long-poll: nothing would read the answer.
    logging::Debug(component_, "client left a waiting request");
    Close(c);
    return;
  }
  if (events & EPOLLOUT) {
    bool sent = Flush(c);  // a reply, or a 100 Continue while the body is still coming
    if (c.closed || (!sent && c.phase == Phase::kWriting)) return;
  }
  Advance(c);
}

void HttpServer::ReadFrom(Connection& c) {
  // While a request is answered, a client may send its next one; more than one request's worth is abuse.
  size_t limit = limits_.max_head_bytes + limits_.max_body_bytes + kReadChunk;
  char buffer[kReadChunk];
  while (c.in.size() < limit) {
    ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      c.in.append(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      c.peer_closed = true;
      return;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return;
    } else {
      c.peer_closed = true;
      return;
    }
  }
  if (c.phase == Phase::kParked || c.phase == Phase::kWriting) Close(c);
}

void HttpServer::Advance(Connection& c) {
  while (!c.closed) {
    switch (c.phase) {
      case Phase::kWriting:
        if (!Flush(c)) return;
        break;
      case Phase::kParked:
        return;
      case Phase::kIdle:
      case Phase::kReading:
        if (!Dispatch(c)) {
          if (c.peer_closed) Close(c);
          return;
        }
        break;
    }
  }
}

// Moves the connection on when its buffered bytes allow it; false when it needs more of them.
bool HttpServer::Dispatch(Connection& c) {
  if (!c.head) {
    if (c.in.empty()) return false;
    if (c.phase == Phase::kIdle) {
      c.phase = Phase::kReading;
      c.deadline = Clock::now() + limits_.request_timeout;
    }
    auto parsed = ParseRequestHead(c.in, limits_.max_head_bytes);
    if (std::holds_alternative<HeadIncomplete>(parsed)) return false;
    if (auto* error = std::get_if<HeadError>(&parsed)) {
      Respond(c, ErrorReply(error->status, error->message), /*close=*/true);
      return true;
    }
    c.head = std::get<ParsedHead>(std::move(parsed));
    c.in.erase(0, c.head->size);
    const RequestHead& head = c.head->head;
    c.keep_alive = head.keep_alive;
    if (c.refuse) {
      Respond(c, ErrorReply(503, "too many connections; try again"), /*close=*/true);
      return true;
    }
    if (head.content_length > limits_.max_body_bytes) {
      // Answered before the body, so the connection cannot be kept: the body would be read as
      // the next request.
      const Handler* unused = nullptr;
      std::optional<HttpResponse> refusal = Route(head, &unused);
      Respond(c, refusal ? *refusal : ErrorReply(413, "body over " + std::to_string(limits_.max_body_bytes) + " bytes"),
              /*close=*/true);
      return true;
    }
    if (head.expect_continue && c.in.size() < head.content_length) c.out += "HTTP/1.1 100 Continue\r\n\r\n";
  }
  if (c.in.size() < c.head->head.content_length) {
    if (!c.out.empty()) Flush(c);  // the 100 Continue
    return false;
  }
  size_t length = c.head->head.content_length;
  HttpRequest request{std::move(c.head->head), c.in.substr(0, length)};
  c.in.erase(0, length);
  c.head.reset();
  const Handler* handler = nullptr;
  if (std::optional<HttpResponse> refusal = Route(request.head, &handler)) {
    Respond(c, *refusal, !c.keep_alive);
    return true;
  }
  Reply reply = (*handler)(request);
  if (auto* response = std::get_if<HttpResponse>(&reply)) {
    Respond(c, *response, !c.keep_alive);
  } else {
    Park(c, std::get<ParkedReply>(std::move(reply)));
  }
  return true;
}

std::optional<HttpResponse> HttpServer::Route(const RequestHead& head, const Handler** handler) const {
  auto path = routes_.find(head.path);
  if (path == routes_.end()) return ErrorReply(404, not_found_);
  auto method = path->second.find(head.method);
  if (method != path->second.end()) {
    *handler = &method->second;
    return std::nullopt;
  }
  std::string allowed;
  for (const auto& [name, unused] : path->second) allowed += (allowed.empty() ? "" : ", ") + name;
  HttpResponse refusal = ErrorReply(405, head.method + " is not allowed on " + head.path + "; use " + allowed);
  refusal.headers.emplace_back("Allow", allowed);
  return refusal;
}

void HttpServer::Respond(Connection& c, const HttpResponse& response, bool close) {
  c.out += SerializeResponse(response, close);
  c.close_after_write = close;
  c.phase = Phase::kWriting;
  c.deadline = Clock::now() + limits_.request_timeout;
}

// Sends what is queued; true once all is sent and the connection waits for its next request.
bool HttpServer::Flush(Connection& c) {
  while (!c.out.empty()) {
    ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      WatchWrites(c, true);
      return false;
    } else {
      Close(c);
      return false;
    }
  }
  WatchWrites(c, false);
  if (c.phase != Phase::kWriting) return true;  // a 100 Continue went out; still reading
  if (c.close_after_write) {
    Close(c);
    return false;
  }
  c.phase = Phase::kIdle;
  c.deadline = Clock::now() + limits_.idle_timeout;
  return true;
}

void HttpServer::Park(Connection& c, ParkedReply parked) {
  c.phase = Phase::kParked;
  c.deadline = parked.deadline;
  c.parked = std::move(parked);
  ++parked_;
}

void HttpServer::PollParked(Connection& c, bool expired) {
  std::optional<HttpResponse> response = c.parked->poll(expired);
  if (!response) return;
  c.parked.reset();
  --parked_;
  Respond(c, *response, !c.keep_alive);
  Advance(c);
}

void HttpServer::ExpireDeadlines() {
  auto now = Clock::now();
  for (auto& [id, c] : connections_) {
    if (c->closed || c->deadline > now) continue;
    switch (c->phase) {
      case Phase::kIdle:
      case Phase::kWriting:
        Close(*c);
        break;
      case Phase::kReading:
        // However slowly its bytes come, a request has request_timeout to arrive.
        Respond(*c, ErrorReply(408, "the request did not arrive within " +
                                        std::to_string(limits_.request_timeout.count()) + " ms"),
                /*close=*/true);
        Advance(*c);
        break;
      case Phase::kParked:
        PollParked(*c, /*expired=*/true);
        break;
    }
  }
}

void HttpServer::WatchWrites(Connection& c, bool on) {
  if (c.writes_watched == on) return;
  epoll_event event{static_cast<uint32_t>(EPOLLIN | EPOLLRDHUP | (on ? static_cast<int>(EPOLLOUT) : 0)), {.u64 = c.id}};
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &event);
  c.writes_watched = on;
}

void HttpServer::Close(Connection& c) {
  if (c.closed) return;
  if (c.parked) {
    c.parked.reset();
    --parked_;
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  close(c.fd);
  c.closed = true;
  --live_;
}

}  // namespace sidecar
