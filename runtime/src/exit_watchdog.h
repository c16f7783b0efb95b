// A watchdog that ends the process when a blocking step outlives its deadline.
//
// NCCL's blocking ncclCommInitRankConfig has no timeout, and it cannot be abandoned from another
// thread: ncclCommAbort on a communicator whose init is still running waits for that init and
// then frees what the init still uses. So when a blocking init is still running at the deadline
// (a rank that never came, an unreachable root, a hung transport), the only safe way out is to end
// the process with a message naming the cause; the operator then restarts the attempt, as it does
// for any trainer that fails.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "log.h"
#include "nccl_k8s/runtime.h"

namespace nccl_k8s {

class ExitWatchdog {
 public:
  // The trainer's exit status when the watchdog fires (as `timeout` uses).
  static constexpr int kExitCode = 124;

  // Arms it: unless Disarm() comes first, at `deadline` it writes `message` with `fields`,
  // waited_ms (since arming) and exit_code as one error log line on stderr and ends the process
  // with kExitCode (_exit: no atexit handlers or static destructors, which could wait on the hung
  // NCCL state).
  ExitWatchdog(Deadline deadline, std::string message, log::Fields fields);
  ExitWatchdog(const ExitWatchdog&) = delete;
  ExitWatchdog& operator=(const ExitWatchdog&) = delete;
  ~ExitWatchdog() { Disarm(); }

  // Stops the watchdog and waits for its thread (returns at once, it does not sleep out the
  // deadline). Idempotent.
  void Disarm();

 private:
  void Watch(Deadline deadline);

  const Clock::time_point armed_ = Clock::now();
  std::mutex mu_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  std::string message_;
  log::Fields fields_;
  std::thread thread_;  // last: started once the members it reads exist
};

}  // namespace nccl_k8s
