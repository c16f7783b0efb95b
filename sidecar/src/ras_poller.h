// Reads NCCL's health report every `interval` on a thread of its own and keeps the verdict of a
// RasWatch, so the stall watch can ask once a second without ever waiting for NCCL:
//
//   RasPoller ras({.timeout = stall_timeout});
//   ras.Start();
//   ... every second: if (auto why = ras.Poll(now)) { stalled: why }
//
// Each report is gathered by RAS from every process of the job (a job-wide RAS collective), so
// the interval is long and one pod asking is enough (sidecar/README.md, "NCCL's health report").
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "ras_client.h"
#include "ras_watch.h"

namespace sidecar {

struct RasPollerOptions {
  RasClientOptions client;
  std::chrono::seconds interval{30};
  std::chrono::seconds timeout{600};  // how long a problem must last (the stall timeout)
};

class RasPoller {
 public:
  using Clock = RasWatch::Clock;
  using Ask = std::function<RasAnswer(const RasClientOptions&)>;

  explicit RasPoller(RasPollerOptions options, Ask ask = AskRas);
  ~RasPoller();  // stops and joins
  RasPoller(const RasPoller&) = delete;
  RasPoller& operator=(const RasPoller&) = delete;

  void Start();
  void Stop();
  // The stall reason NCCL's reports give, if any; never blocks on NCCL. A verdict whose last
  // report is older than three intervals plus the client's deadline is not given (the reads
  // have failed since, so nothing current backs it).
  std::optional<std::string> Poll(Clock::time_point now);

  // One read and its verdict, on the caller's thread (the thread's loop; tests).
  void PollOnce(Clock::time_point now);

 private:
  void Run(std::stop_token stop);

  const RasPollerOptions options_;
  const Ask ask_;
  std::mutex mu_;
  RasWatch watch_;  // guarded by mu_
  RasAnswer::Kind last_kind_ = RasAnswer::Kind::kOk;  // for logging transitions only
  std::string last_problem_;                          // likewise
  std::condition_variable_any wake_;
  std::jthread thread_;
};

}  // namespace sidecar
