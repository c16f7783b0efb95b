#include "http_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace nccl_k8s {
namespace {

using Clock = std::chrono::steady_clock;

int MillisLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Status Unavailable(const HttpUrl& url, const std::string& what) {
  return Status(Code::kUnavailable,
                "sidecar at http://" + url.host + ":" + std::to_string(url.port) + ": " + what);
}

bool WaitFor(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    int rc = poll(&p, 1, MillisLeft(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

Result<int> Connect(const HttpUrl& url, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(url.host.c_str(), std::to_string(url.port).c_str(), &hints, &found);
  if (rc != 0) return Unavailable(url, std::string("cannot resolve host: ") + gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
        (errno == EINPROGRESS && WaitFor(fd, POLLOUT, deadline))) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) {
        freeaddrinfo(found);
        return fd;
      }
      last_error = std::strerror(err);
    } else {
      last_error = errno == EINPROGRESS ? "connect timed out" : std::strerror(errno);
    }
    close(fd);
  }
  freeaddrinfo(found);
  return Unavailable(url, "cannot connect: " + last_error);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<size_t> ParseSize(std::string_view text, int base) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
  size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || text.empty() || end != text.data() + text.size()) return std::nullopt;  // "12abc" is no size
  return value;
}

Result<std::string> DecodeChunked(std::string_view body) {
  std::string out;
  for (;;) {
    size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) return Status(Code::kUnavailable, "truncated chunked body");
    std::string_view size_line = body.substr(0, eol);
    size_line = size_line.substr(0, size_line.find(';'));
    auto size = ParseSize(size_line.substr(0, size_line.find(';')), 16);  // after ';': chunk extensions
    if (!size) return Status(Code::kUnavailable, "bad chunk size");
    body.remove_prefix(eol + 2);
    if (*size == 0) return out;
    if (body.size() < *size + 2) return Status(Code::kUnavailable, "truncated chunk");
    out.append(body.substr(0, *size));
    body.remove_prefix(*size + 2);
  }
}

}  // namespace

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Status(Code::kInvalidArgument, "URL '" + std::string(url) + "' does not start with http://");
  }
  url.remove_prefix(kScheme.size());
  size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  HttpUrl out;
  if (slash != std::string_view::npos) out.base_path = std::string(url.substr(slash));
  while (!out.base_path.empty() && out.base_path.back() == '/') out.base_path.pop_back();
  size_t colon = authority.rfind(':');
  bool bracketed = !authority.empty() && authority.front() == '[';
  if (colon != std::string_view::npos && (!bracketed || authority.find(']') < colon)) {
    auto port = ParseSize(authority.substr(colon + 1), 10);
    if (!port || *port == 0 || *port > 65535) {
      return Status(Code::kInvalidArgument, "URL 'http://" + std::string(url) + "' has a bad port");
    }
    out.port = static_cast<int>(*port);
    authority = authority.substr(0, colon);
  }
  if (bracketed && authority.size() >= 2 && authority.back() == ']') {
    authority = authority.substr(1, authority.size() - 2);
  }
  if (authority.empty()) return Status(Code::kInvalidArgument, "URL has no host");
  out.host = std::string(authority);
  return out;
}

Result<HttpResponse> ParseHttpResponse(std::string_view raw) {
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return Status(Code::kUnavailable, "incomplete HTTP response");
  std::string_view head = raw.substr(0, head_end);
  std::string_view body = raw.substr(head_end + 4);
  size_t eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  if (status_line.substr(0, 5) != "HTTP/" || status_line.size() < 12) {
    return Status(Code::kUnavailable, "not an HTTP response");
  }
  // Exactly three digits, 100-599 ("HTTP/1.1 4x0" is no status 4).
  const std::string_view code_text = status_line.substr(9, 3);
  auto code = code_text.find_first_not_of("0123456789") == std::string_view::npos ? ParseSize(code_text, 10)
                                                                                  : std::nullopt;
  if (!code || *code < 100 || *code > 599) return Status(Code::kUnavailable, "bad HTTP status line");
  HttpResponse response;
  response.status = static_cast<int>(*code);
  std::optional<size_t> content_length;
  bool chunked = false;
  while (eol != std::string_view::npos) {
    head.remove_prefix(eol + 2);
    eol = head.find("\r\n");
    std::string_view line = head.substr(0, eol);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name = Lower(line.substr(0, colon));
    std::string_view value = line.substr(colon + 1);
    if (name == "content-length") {
      content_length = ParseSize(value, 10);
      if (!content_length) return Status(Code::kUnavailable, "bad Content-Length");
    }
    if (name == "transfer-encoding" && Lower(value).find("chunked") != std::string::npos) chunked = true;
  }
  if (chunked) {
    auto decoded = DecodeChunked(body);
    if (!decoded.ok()) return decoded.status();
    response.body = std::move(*decoded);
  } else if (content_length) {
    if (body.size() < *content_length) return Status(Code::kUnavailable, "truncated HTTP body");
    response.body = std::string(body.substr(0, *content_length));
  } else {
    response.body = std::string(body);
  }
  return response;
}

Result<HttpResponse> HttpRequest(const HttpUrl& url, std::string_view method, std::string_view path,
                                 std::string_view content_type, std::string_view body,
                                 Clock::time_point deadline) {
  auto fd_or = Connect(url, deadline);
  if (!fd_or.ok()) return fd_or.status();
  Fd fd(*fd_or);

  std::string request;
  request.append(method).append(" ").append(url.base_path).append(path).append(" HTTP/1.1\r\n");
  request.append("Host: ").append(url.host).append(":").append(std::to_string(url.port)).append("\r\n");
  request.append("Connection: close\r\nUser-Agent: nccl-k8s-runtime\r\n");
  if (!content_type.empty()) request.append("Content-Type: ").append(content_type).append("\r\n");
  if (method != "GET") request.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  request.append("\r\n").append(body);

  for (size_t sent = 0; sent < request.size();) {
    if (!WaitFor(fd.get(), POLLOUT, deadline)) return Unavailable(url, "send timed out");
    ssize_t n = send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return Unavailable(url, std::string("send: ") + std::strerror(errno));
    if (n > 0) sent += static_cast<size_t>(n);
  }

  std::string raw;
  char buf[8192];
  for (;;) {
    if (!WaitFor(fd.get(), POLLIN, deadline)) return Unavailable(url, "no answer before the deadline");
    ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return Unavailable(url, std::string("recv: ") + std::strerror(errno));
    }
    raw.append(buf, static_cast<size_t>(n));
    if (raw.size() > (1u << 20)) return Unavailable(url, "answer larger than 1 MiB");
  }
  auto parsed = ParseHttpResponse(raw);
  if (!parsed.ok()) return Unavailable(url, parsed.status().message());
  return parsed;
}

}  // namespace nccl_k8s
