#include "ras_poller.h"

#include <utility>

#include "logging/log.h"

namespace sidecar {

namespace {
constexpr char kComponent[] = "ras";
}  // namespace

RasPoller::RasPoller(RasPollerOptions options, Ask ask)
    : options_(std::move(options)), ask_(std::move(ask)), watch_(options_.timeout) {}

RasPoller::~RasPoller() { Stop(); }

void RasPoller::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void RasPoller::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  wake_.notify_all();
  thread_.join();
}

void RasPoller::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    PollOnce(Clock::now());
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, stop, options_.interval, [] { return false; });
  }
}

void RasPoller::PollOnce(Clock::time_point now) {
  RasAnswer answer = ask_(options_.client);
  std::string problem;
  std::optional<RasReport> report;
  if (answer.kind == RasAnswer::Kind::kOk) {
    RasParse parsed = ParseRasAnswer(answer.format, answer.body);
    if (parsed.report) report = std::move(parsed.report);
    else problem = parsed.error;
  } else if (answer.kind == RasAnswer::Kind::kFailed) {
    problem = answer.error;
  }
  std::lock_guard lock(mu_);
  // One line per change, none in a steady state: a pod without NCCL says so once.
  if (answer.kind == RasAnswer::Kind::kUnavailable) {
    watch_.Forget();
    if (last_kind_ != answer.kind) {
      logging::Info(kComponent, "NCCL RAS not listening: no stall reason from it until it does",
                    {{"address", options_.client.host + ":" + std::to_string(options_.client.port)}});
    }
  } else if (report) {
    watch_.Observe(now, *report);
    if (last_kind_ != answer.kind || !last_problem_.empty()) {
      logging::Info(kComponent, "NCCL RAS answers", {{"nccl", report->nccl_version},
                                                    {"format", report->format == RasFormat::kJson ? "json" : "text"}});
    }
  } else if (problem != last_problem_) {
    logging::Warn(kComponent, "NCCL RAS gave no report; keeping the last one's verdict", {{"error", problem}});
  }
  last_kind_ = answer.kind;
  last_problem_ = problem;
}

std::optional<std::string> RasPoller::Poll(Clock::time_point now) {
  std::lock_guard lock(mu_);
  std::optional<Clock::time_point> last = watch_.last_report();
  if (!last || now - *last > 3 * options_.interval + options_.client.deadline) return std::nullopt;
  return watch_.Reason();
}

}  // namespace sidecar
