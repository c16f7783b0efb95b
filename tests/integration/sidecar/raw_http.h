// Raw HTTP/1.1 over loopback TCP for tests and benchmarks that must misbehave as clients do:
// connect and stay idle, send half a request, send a request and walk away. Blocking sockets,
// every read bounded by a deadline.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace sidecar_it {

struct RawAnswer {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
};

class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Close();
  }
  RawConnection(RawConnection&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), in_(std::move(other.in_)), eof_(other.eof_) {}
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  RawConnection& operator=(RawConnection&& other) noexcept {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    in_ = std::move(other.in_);
    eof_ = other.eof_;
    return *this;
  }
  ~RawConnection() { Close(); }

  bool connected() const { return fd_ >= 0; }

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (fd_ >= 0 && sent < bytes.size()) {
      ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return fd_ >= 0;
  }

  // One whole response (Content-Length body, or up to the close), or nullopt at the deadline.
  std::optional<RawAnswer> Read(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      if (auto answer = TakeAnswer(/*closed=*/false)) return answer;
      if (!Fill(deadline)) return TakeAnswer(/*closed=*/true);
    }
  }

  // True when the server closed the connection before the deadline (after any answer it sent).
  bool ClosedByServer(std::chrono::steady_clock::time_point deadline) {
    while (Fill(deadline)) {
    }
    return eof_;
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  // Reads what is there; false at the deadline, on close or on an error.
  bool Fill(std::chrono::steady_clock::time_point deadline) {
    if (fd_ < 0 || eof_) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buffer[4096];
    ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    in_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  std::optional<RawAnswer> TakeAnswer(bool closed) {
    size_t end = in_.find("\r\n\r\n");
    if (end == std::string::npos) return std::nullopt;
    RawAnswer answer;
    answer.head = in_.substr(0, end);
    if (answer.head.rfind("HTTP/1.", 0) != 0 || answer.head.size() < 12) return std::nullopt;
    answer.status = std::atoi(answer.head.c_str() + 9);
    size_t length = 0;
    bool has_length = false;
    for (size_t at = answer.head.find("\r\n"); at != std::string::npos; at = answer.head.find("\r\n", at + 2)) {
      std::string line = answer.head.substr(at + 2, answer.head.find("\r\n", at + 2) - at - 2);
      if (line.size() > 15 && strncasecmp(line.c_str(), "content-length:", 15) == 0) {
        length = std::strtoul(line.c_str() + 15, nullptr, 10);
        has_length = true;
      }
    }
    size_t body_start = end + 4;
    if (has_length ? in_.size() < body_start + length : !closed && answer.status != 204) return std::nullopt;
    if (!has_length) length = answer.status == 204 ? 0 : in_.size() - body_start;
    answer.body = in_.substr(body_start, length);
    in_.erase(0, body_start + length);
    return answer;
  }

  int fd_ = -1;
  std::string in_;
  bool eof_ = false;
};

inline std::string GetRequest(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
}

inline std::string PostRequest(const std::string& target, const std::string& body,
                               const std::string& content_type = "application/octet-stream") {
  return "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace sidecar_it
