// How the operator reads the API server's refusal of a pod create: only the API server's own
// verdict that the pod is malformed is permanent (the same template fails every time, so the
// job fails); everything else (Forbidden by a quota or a policy, a webhook's answer, a proxy's
// 400) may pass and is retried.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kube/status.h"

namespace ncclop::policy {

// 422 Invalid with details.kind "Pod" (field validation), or 400 BadRequest "... cannot be
// handled as a Pod" (decoding, e.g. a malformed quantity); never an admission webhook's answer.
bool IsMalformedPod(const kube::Status& refusal);

// A refusal of the request itself (Invalid, BadRequest, Forbidden): every other pod of the
// attempt would be refused the same way, so a round of creates stops at the first.
bool IsRefusal(const kube::Status& status);

struct FailedCreate {
  int index = 0;
  kube::Status status;
};

struct CreateSummary {
  kube::Status first_error;  // the first refusal, else the first error (ok when none failed)
  int errors = 0;
  // The refused create of the lowest index, so that every try reports the same pod (and a
  // repeated event only bumps its count).
  std::optional<FailedCreate> refused;
};

// What a round of pod creates amounts to, from its failures in the order they happened.
CreateSummary SummarizeCreates(const std::vector<FailedCreate>& failures);

// The refusal for status and events, cut to max_bytes (condition messages are bounded).
std::string RefusalMessage(const std::string& pod, const kube::Status& refusal, std::size_t max_bytes = 4096);

// The controller's verdict that this job's pods cannot be created: the API server refused one
// as malformed (TemplateRejected: reason PodTemplateRejected), or kept refusing them as
// Forbidden for longer than failurePolicy.forbiddenRetrySeconds (ForbiddenTooLong: reason
// PodCreateForbidden). Decide fails the job with it. Empty: none.
struct PodCreateVerdict {
  std::string reason;
  std::string message;
  bool empty() const { return reason.empty(); }
};

// The verdict when the API server judged a pod malformed (refusal_message from RefusalMessage) ...
PodCreateVerdict TemplateRejected(const std::string& refusal_message);
// ... or kept refusing it as Forbidden for failurePolicy.forbiddenRetrySeconds.
PodCreateVerdict ForbiddenTooLong(const std::string& refusal_message, int retried_seconds);

}  // namespace ncclop::policy
