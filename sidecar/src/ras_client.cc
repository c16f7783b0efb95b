#include "ras_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace sidecar {
namespace {

using Clock = std::chrono::steady_clock;

// One connection to RAS, every wait bounded by the exchange's deadline.
class Connection {
 public:
  Connection(const RasClientOptions& options)
      : options_(options), deadline_(Clock::now() + options.deadline) {}
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // "" when connected; else the error, and *refused when nothing listens there.
  std::string Open(bool* refused);
  std::string Send(std::string_view text);
  // One line without its '\n'; "" on success, else the error.
  std::string ReadLine(std::string* line);
  // Everything until NCCL closes the connection.
  std::string ReadToEnd(std::string* body);

 private:
  // Waits for `events` until the deadline (or `limit`, if sooner); "" when ready.
  std::string Wait(short events, Clock::time_point limit);
  // Reads what is there into buffer_; false at EOF or on an error (then *error says which).
  bool Fill(std::string* error);

  const RasClientOptions& options_;
  const Clock::time_point deadline_;
  int fd_ = -1;
  std::string buffer_;  // received, not yet handed out
};

std::string Where(const RasClientOptions& options) {
  return options.host + ":" + std::to_string(options.port);
}

std::string Connection::Wait(short events, Clock::time_point limit) {
  limit = std::min(limit, deadline_);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(limit - Clock::now());
    if (left.count() <= 0) return "no answer within " + std::to_string(options_.deadline.count()) + " ms";
    pollfd pfd{fd_, events, 0};
    int n = ::poll(&pfd, 1, static_cast<int>(left.count()) + 1);
    if (n > 0) return "";
    if (n < 0 && errno != EINTR) return std::string("poll: ") + std::strerror(errno);
  }
}

std::string Connection::Open(bool* refused) {
  *refused = true;  // until an address fails otherwise
  std::string host = options_.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(options_.port);
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    *refused = false;
    return "cannot resolve " + host + ": " + ::gai_strerror(rc);
  }
  std::string error = "no address for " + options_.host;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    fd_ = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd_ < 0) {
      error = std::string("socket: ") + std::strerror(errno);
      *refused = false;
      continue;
    }
    int rc = ::connect(fd_, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      error = Wait(POLLOUT, Clock::now() + options_.connect_timeout);
      int so_error = 0;
      socklen_t len = sizeof(so_error);
      if (error.empty() && ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0) {
        errno = so_error;
        rc = so_error == 0 ? 0 : -1;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (rc == 0) {
      ::freeaddrinfo(found);
      return "";
    }
    if (errno != ECONNREFUSED) *refused = false;
    error = "connect to " + Where(options_) + ": " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
  ::freeaddrinfo(found);
  return error;
}

std::string Connection::Send(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL);
    if (n > 0) {
      text.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (std::string error = Wait(POLLOUT, deadline_); !error.empty()) return error;
    } else if (n < 0 && errno != EINTR) {
      return std::string("send: ") + std::strerror(errno);
    }
  }
  return "";
}

bool Connection::Fill(std::string* error) {
  if (buffer_.size() >= options_.max_bytes) {
    *error = "the answer is longer than " + std::to_string(options_.max_bytes) + " bytes";
    return false;
  }
  if (*error = Wait(POLLIN, deadline_); !error->empty()) return false;
  char chunk[16384];
  for (;;) {
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) return false;  // EOF, *error empty
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    if (errno != EINTR) {
      *error = std::string("recv: ") + std::strerror(errno);
      return false;
    }
  }
}

std::string Connection::ReadLine(std::string* line) {
  std::string error;
  for (;;) {
    if (std::size_t end = buffer_.find('\n'); end != std::string::npos) {
      *line = buffer_.substr(0, end);
      if (!line->empty() && line->back() == '\r') line->pop_back();
      buffer_.erase(0, end + 1);
      return "";
    }
    if (!Fill(&error)) return error.empty() ? "the connection was closed before a whole line" : error;
  }
}

std::string Connection::ReadToEnd(std::string* body) {
  std::string error;
  while (Fill(&error)) {
  }
  if (!error.empty()) return error;
  body->clear();
  body->swap(buffer_);
  return "";
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

RasAnswer Failed(std::string error) {
  RasAnswer answer;
  answer.kind = RasAnswer::Kind::kFailed;
  answer.error = std::move(error);
  return answer;
}

}  // namespace

RasAnswer AskRas(const RasClientOptions& options) {
  Connection conn(options);
  bool refused = false;
  if (std::string error = conn.Open(&refused); !error.empty()) {
    RasAnswer answer = Failed(error);
    if (refused) answer.kind = RasAnswer::Kind::kUnavailable;
    return answer;
  }
  std::string line;
  if (std::string error = conn.Send("CLIENT PROTOCOL 2\n"); !error.empty()) return Failed("handshake: " + error);
  if (std::string error = conn.ReadLine(&line); !error.empty()) return Failed("handshake: " + error);
  constexpr std::string_view kServer = "SERVER PROTOCOL ";
  if (!StartsWithNoCase(line, kServer)) return Failed("not NCCL's RAS: it answered \"" + line.substr(0, 80) + "\"");
  RasAnswer answer;
  answer.server_protocol = line.substr(kServer.size());
  answer.format = RasFormat::kText;
  if (options.json) {
    if (std::string error = conn.Send("SET FORMAT json\n"); !error.empty()) return Failed("set format: " + error);
    if (std::string error = conn.ReadLine(&line); !error.empty()) return Failed("set format: " + error);
    // An NCCL before 2.28.7 answers "ERROR: Unknown command set format json": it speaks text.
    if (line == "OK") answer.format = RasFormat::kJson;
  }
  if (std::string error = conn.Send("STATUS\n"); !error.empty()) return Failed("status: " + error);
  if (std::string error = conn.ReadToEnd(&answer.body); !error.empty()) return Failed("status: " + error);
  answer.kind = RasAnswer::Kind::kOk;
  return answer;
}

}  // namespace sidecar
