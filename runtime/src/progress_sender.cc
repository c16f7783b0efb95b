#include "progress_sender.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "contract/env.h"
#include "contract/names.h"
#include "http_client.h"

namespace nccl_k8s {
namespace {

// Appends to a fixed buffer; once something does not fit, the writer is full and stays so.
class Writer {
 public:
  Writer(char* out, size_t capacity) : out_(out), capacity_(capacity) {}
  bool Text(std::string_view text) {
    if (size_ + text.size() > capacity_) return false;
    std::memcpy(out_ + size_, text.data(), text.size());
    size_ += text.size();
    return true;
  }
  template <class Number>
  bool Num(Number value) {
    auto [end, ec] = std::to_chars(out_ + size_, out_ + capacity_, value);
    if (ec != std::errc()) return false;
    size_ = end - out_;
    return true;
  }
  size_t size() const { return size_; }
  void Truncate(size_t size) { size_ = size; }

 private:
  char* out_;
  size_t capacity_;
  size_t size_ = 0;
};

// A name the sidecar takes, written as a JSON string; control characters are refused.
bool Name(Writer& w, std::string_view name) {
  if (name.empty() || name.size() > contract::kProgressMetricNameMax) return false;
  if (!w.Text("\"")) return false;
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
    if ((c == '"' || c == '\\') && !w.Text("\\")) return false;
    if (!w.Text(std::string_view(&c, 1))) return false;
  }
  return w.Text("\"");
}

}  // namespace

size_t FormatProgressReport(char* out, int64_t rank, int64_t step, std::optional<int64_t> total,
                            std::span<const Metric> metrics, bool done) {
  // What closes the report is kept free while metrics are added: "}}" and ',"done":true'.
  constexpr std::string_view kDone = ",\"done\":true";
  constexpr size_t kClosing = 2 + kDone.size();
  Writer w(out, contract::kProgressReportMaxBytes - kClosing);
  // Whole numbers of at most 20 characters each: these always fit.
  w.Text("{\"rank\":");
  w.Num(rank);
  w.Text(",\"step\":");
  w.Num(step);
  if (total) {
    w.Text(",\"total\":");
    w.Num(*total);
  }
  size_t sent = 0;
  for (const Metric& metric : metrics.first(std::min<size_t>(metrics.size(), contract::kProgressMaxMetrics))) {
    if (!std::isfinite(metric.value)) continue;
    const size_t before = w.size();
    if (w.Text(sent == 0 ? ",\"metrics\":{" : ",") && Name(w, metric.name) && w.Text(":") && w.Num(metric.value)) {
      ++sent;
    } else {
      w.Truncate(before);
    }
  }
  Writer closing(out, contract::kProgressReportMaxBytes);
  closing.Truncate(w.size());
  if (sent > 0) closing.Text("}");
  if (done) closing.Text(kDone);
  closing.Text("}");
  return closing.size();
}

int64_t ReportingRank(const JobEnv& env, const EnvLookup& lookup) {
  int64_t local = 0;
  if (const char* raw = lookup(contract::env::kTorchLocalRank)) {
    std::string_view text(raw);
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && value >= 0 && value < env.ranks_per_pod()) {
      local = value;
    }
  }
  return env.first_rank() + local;
}

ProgressSender::ProgressSender(const EnvLookup& lookup) {
  Result<JobEnv> env = ParseJobEnv(lookup);
  if (!env.ok()) return;
  Result<HttpUrl> url = ParseHttpUrl(env->sidecar_url);
  if (!url.ok()) return;
  rank_ = ReportingRank(*env, lookup);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(url->port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    close(fd);
    return;
  }
  fd_ = fd;
}

ProgressSender::~ProgressSender() {
  if (fd_ >= 0) close(fd_);
}

void ProgressSender::Report(int64_t step, std::optional<int64_t> total, std::span<const Metric> metrics) noexcept {
  if (step < 0 || (total && *total < 0)) return;  // not a report
  last_step_.store(step, std::memory_order_relaxed);
  last_total_.store(total.value_or(-1), std::memory_order_relaxed);
  Send(step, total, metrics, false);
}

void ProgressSender::Done() noexcept {
  const int64_t total = last_total_.load(std::memory_order_relaxed);
  Send(last_step_.load(std::memory_order_relaxed), total >= 0 ? std::optional<int64_t>(total) : std::nullopt, {},
       true);
}

void ProgressSender::Send(int64_t step, std::optional<int64_t> total, std::span<const Metric> metrics,
                          bool done) noexcept {
  if (fd_ < 0) return;
  char datagram[contract::kProgressReportMaxBytes];
  const size_t size = FormatProgressReport(datagram, rank_, step, total, metrics, done);
  // A full socket buffer (EAGAIN), no sidecar (ECONNREFUSED from an earlier datagram's ICMP):
  // the report is lost, which the contract allows; the next one is sent as usual.
  (void)!send(fd_, datagram, size, MSG_DONTWAIT | MSG_NOSIGNAL);
}

namespace {

const char* ProcessEnv(const char* name) { return std::getenv(name); }

ProgressSender& ProcessSender() {
  static ProgressSender sender(ProcessEnv);  // opened at the first report; thread-safe
  return sender;
}

}  // namespace

void ReportProgress(int64_t step, std::optional<int64_t> total, std::span<const Metric> metrics) noexcept {
  ProcessSender().Report(step, total, metrics);
}

void ReportProgress(int64_t step, std::optional<int64_t> total, std::initializer_list<Metric> metrics) noexcept {
  ProcessSender().Report(step, total, std::span<const Metric>(metrics.begin(), metrics.size()));
}

void ReportProgressDone() noexcept { ProcessSender().Done(); }

}  // namespace nccl_k8s
