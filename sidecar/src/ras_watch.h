// Which of NCCL's own health reports (ras_report.h) say the job is stalled. Pure: reports and the
// time each was read go in, a reason comes out; nothing here reads a clock or a socket.
//
// A report's problems ("conditions") are each a reason once NCCL has reported the very same
// problem in reports read at least `timeout` apart:
//
//  * dead: a rank of a communicator that a live rank still holds, whose process RAS considers
//    dead (unreachable for 60 s);
//  * unresponsive: such a rank whose process did not answer RAS;
//  * error: a rank reporting an initialisation or asynchronous NCCL error;
//  * stuck collective: a communicator whose ranks have launched different numbers of a
//    collective ("Communicator ranks have different AllReduce operation counts") while not one
//    count of any rank moves. Counts that stop while equal on every rank are no reason: RAS cannot
//    tell an idle communicator from one whose collective hangs in the network, and a trainer
//    that checkpoints or evaluates looks the same; the step-progress watch covers those.
//
// Waiting `timeout` for a dead peer too keeps a job's end from reading as a stall: a rank that
// finished and exited is declared dead 60 s later by RAS in every process still holding the
// communicator (saving a checkpoint, say). Nothing about a report is a reason before then,
// and a pod without NCCL or with RAS off never has one (sidecar/README.md).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ras_report.h"

namespace sidecar {

struct RasCondition {
  // What must stay the same for two reports to show the same problem (for a stuck collective:
  // the communicator and every count of every rank).
  std::string key;
  std::string text;  // the reason, in NCCL's words
};

// A report's problems, most severe first.
std::vector<RasCondition> RasConditions(const RasReport& report);

class RasWatch {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RasWatch(std::chrono::seconds timeout) : timeout_(timeout) {}

  // A report read at `now`.
  void Observe(Clock::time_point now, const RasReport& report);
  // RAS is not there (no NCCL process in the pod, or NCCL_RAS_ENABLE=0): nothing is known.
  void Forget();
  // A problem NCCL has reported for at least `timeout`, the oldest one, in NCCL's words.
  // Between reports (and after a failed read) it keeps what the last report said.
  std::optional<std::string> Reason() const;
  // When the last report was read (nullopt: none since the start or the last Forget).
  std::optional<Clock::time_point> last_report() const { return last_report_; }

 private:
  struct Seen {
    std::string text;
    Clock::time_point since;
    std::size_t order = 0;  // severity in the last report
  };
  const std::chrono::seconds timeout_;
  std::map<std::string, Seen> seen_;  // by RasCondition::key
  std::optional<Clock::time_point> last_report_;
};

}  // namespace sidecar
