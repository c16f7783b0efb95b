// How the operator reads the API server's refusal of a pod create: only the API server's own
// verdict that the pod is malformed is permanent (the same template fails every time, so the
// job fails); everything else (Forbidden by a quota or a policy, a webhook's answer, a proxy's
// 400) may pass and is retried.
#pragma once

#include <string>

#include "kube/status.h"
#include "policy/plan.h"

namespace ncclop::policy {

// 422 Invalid with details.kind "Pod" (field validation), or 400 BadRequest "... cannot be
// handled as a Pod" (decoding, e.g. a malformed quantity); never an admission webhook's answer.
bool IsMalformedPod(const kube::Status& refusal);

// The refusal for status and events, cut to max_bytes (condition messages are bounded).
std::string RefusalMessage(const std::string& pod, const kube::Status& refusal, std::size_t max_bytes = 4096);

// What fails a job whose pods cannot be created (plan.h's PodCreateVerdict):
// the API server judged a pod malformed (refusal_message from RefusalMessage) ...
PodCreateVerdict TemplateRejected(const std::string& refusal_message);
// ... or kept refusing it as Forbidden for failurePolicy.forbiddenRetrySeconds.
PodCreateVerdict ForbiddenTooLong(const std::string& refusal_message, int retried_seconds);

}  // namespace ncclop::policy
