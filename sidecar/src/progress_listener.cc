#include "progress_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "contract/names.h"
#include "logging/log.h"

namespace sidecar {
namespace {

constexpr char kComponent[] = "sidecar.progress";
// Datagrams taken per recvmmsg call: a burst costs one system call per batch, not per report.
constexpr int kBatch = 32;
// One byte more than a report may have, so that a longer one shows as truncated.
constexpr size_t kBufferBytes = contract::kProgressReportMaxBytes + 1;

bool PowerOfTwo(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

ProgressListener::ProgressListener(ProgressBoard& board, int world_size) : board_(board), world_size_(world_size) {}

ProgressListener::~ProgressListener() {
  Stop();
  if (fd_ >= 0) close(fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

int ProgressListener::Bind(const HostPort& address, std::string* error) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(address.port));
  if (inet_pton(AF_INET, address.host.c_str(), &addr.sin_addr) != 1) {
    *error = "'" + address.host + "' is not an IPv4 address";
    return -1;
  }
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  socklen_t size = sizeof(addr);
  if (fd_ < 0 || wake_fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
    *error = std::strerror(errno);
    return -1;
  }
  return ntohs(addr.sin_port);
}

void ProgressListener::Start() {
  if (fd_ < 0 || wake_fd_ < 0 || thread_.joinable()) return;
  buffers_.reset(new char[kBatch * kBufferBytes]);  // not zeroed: pages are touched as reports come
  thread_ = std::thread([this] { Loop(); });
}

void ProgressListener::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  thread_.join();
}

void ProgressListener::Loop() {
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      logging::Error(kComponent, "cannot wait for progress reports; no longer receiving them",
                     {{"error", std::strerror(errno)}});
      return;
    }
    if (fds[1].revents & POLLIN) return;
    if (fds[0].revents & POLLIN) ReceiveAll();
  }
}

void ProgressListener::ReceiveAll() {
  std::array<iovec, kBatch> iov{};
  std::array<mmsghdr, kBatch> messages{};
  for (int i = 0; i < kBatch; ++i) {
    iov[i] = {buffers_.get() + i * kBufferBytes, kBufferBytes};
    messages[i].msg_hdr.msg_iov = &iov[i];
    messages[i].msg_hdr.msg_iovlen = 1;
  }
  for (;;) {
    int got = recvmmsg(fd_, messages.data(), kBatch, MSG_DONTWAIT, nullptr);
    if (got <= 0) return;  // EAGAIN: all taken; any other error: poll again
    const ReceivedAt at{std::chrono::steady_clock::now(), std::chrono::system_clock::now()};
    for (int i = 0; i < got; ++i) {
      const bool truncated = (messages[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
      Take(std::string_view(buffers_.get() + i * kBufferBytes, messages[i].msg_len), truncated, at);
      messages[i].msg_hdr.msg_flags = 0;
    }
    if (got < kBatch) return;
  }
}

void ProgressListener::Take(std::string_view datagram, bool truncated, const ReceivedAt& at) {
  auto parsed = truncated ? std::variant<ProgressReport, ReportRefused>(ReportRefused{
                                "over " + std::to_string(contract::kProgressReportMaxBytes) + " bytes"})
                          : ParseProgressReport(datagram, world_size_);
  if (auto* report = std::get_if<ProgressReport>(&parsed)) {
    if (board_.Record(std::move(*report), at)) {
      received_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    parsed = ReportRefused{"more than " + std::to_string(ProgressBoard::kMaxRanks) + " ranks reported"};
  }
  const uint64_t dropped = dropped_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (PowerOfTwo(dropped)) {  // a flood of bad datagrams logs a few lines, not one each
    logging::Warn(kComponent, "dropped a progress report",
                  {{"reason", std::get<ReportRefused>(parsed).reason}, {"dropped_so_far", std::to_string(dropped)}});
  }
}

}  // namespace sidecar
