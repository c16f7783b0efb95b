// When an attempt has failed, and what follows: a new attempt after a backoff, or the end of
// the job (an exit code the user marked as "do not retry", or no restarts left). A disruption
// (observed/disruption.h) restarts the attempt without using a restart.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "api/nccl_job.h"
#include "observed/attempt.h"
#include "observed/disruption.h"

namespace ncclop::policy {

struct AttemptFailure {
  std::string pod;
  std::string detail;  // for people: "pod demo-2: trainer exited with code 3 (Error)"
  std::optional<int> exit_code;
  std::optional<observed::Disruption> disruption;  // set when the attempt ended because a pod was disrupted
  bool stalled = false;  // its pods' sidecars found ranks stalled (detail names every such pod)
};

// The first failure among the pods of the attempt (lowest index first, so the message is
// stable across reconciles). A pod that vanished or is being deleted by someone else counts
// as failed once the id was published: it cannot rejoin that attempt's communicator. When any
// failed or deleted pod of the attempt was disrupted, the attempt ended by that disruption: the
// crashes of its peers that lost their communicator follow from it. A pod that vanished without
// being seen disrupted counts as a failure (nothing tells why it went); `gone_disrupted` (by
// index) names the attempt's pods whose delete event showed them disrupted, a reconcile having
// seen them only gone (Remembered::gone_disrupted): they count as disrupted, whether or not the
// id was published, unless a pod of the attempt is at their index again. A pod that failed on
// its own comes before stalled ones; when the attempt stalled, the failure names every stalled pod.
std::optional<AttemptFailure> FindAttemptFailure(const std::string& job_name, const observed::AttemptView& attempt,
                                                 bool id_published,
                                                 const std::map<int, observed::Disruption>& gone_disrupted = {});

enum class FailureVerdict {
  kRestart,                // counts in status.restarts
  kFailFast,               // an exit code in failFastExitCodes
  kRestartsExhausted,      // maxRestarts used
  kRestartAfterDisruption, // counts in status.disruptions, not in restarts
  kDisruptionsExhausted,   // maxDisruptions (when set) used
};

FailureVerdict Judge(const api::FailurePolicy& policy, const AttemptFailure& failure, int restarts_so_far,
                     int disruptions_so_far);

// Wait before restart number `restart` (1-based): backoffSeconds * 2^(restart-1), capped. The
// restarts after disruptions are numbered on their own.
std::chrono::seconds RestartBackoff(const api::FailurePolicy& policy, int restart);

}  // namespace ncclop::policy
