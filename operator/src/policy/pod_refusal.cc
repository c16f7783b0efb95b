#include "policy/pod_refusal.h"

namespace ncclop::policy {

bool IsMalformedPod(const kube::Status& refusal) {
  const std::string& message = refusal.message();
  if (message.rfind("admission webhook", 0) == 0) return false;
  if (refusal.reason() == "Invalid") return refusal.details_kind() == "Pod";
  if (refusal.reason() == "BadRequest") return message.find("cannot be handled as a Pod") != std::string::npos;
  return false;
}

bool IsRefusal(const kube::Status& status) {
  return status.IsInvalid() || status.IsBadRequest() || status.IsForbidden();
}

CreateSummary SummarizeCreates(const std::vector<FailedCreate>& failures) {
  CreateSummary out;
  out.errors = static_cast<int>(failures.size());
  for (const FailedCreate& f : failures) {
    if (!IsRefusal(f.status)) continue;
    if (!out.refused) out.first_error = f.status;
    if (!out.refused || f.index < out.refused->index) out.refused = f;
  }
  if (!out.refused && !failures.empty()) out.first_error = failures.front().status;
  return out;
}

std::string RefusalMessage(const std::string& pod, const kube::Status& refusal, std::size_t max_bytes) {
  std::string out = "the API server refused pod " + pod + ": " + refusal.message();
  if (out.size() > max_bytes) {
    // Cut on a UTF-8 character boundary: the message goes into JSON, which must stay valid.
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

PodCreateVerdict TemplateRejected(const std::string& refusal_message) {
  return {"PodTemplateRejected", refusal_message + "; fix spec.template and create the job again"};
}

PodCreateVerdict ForbiddenTooLong(const std::string& refusal_message, int retried_seconds) {
  return {"PodCreateForbidden", refusal_message + " (refused for " + std::to_string(retried_seconds) +
                                    "s, failurePolicy.forbiddenRetrySeconds; fix the cause and create the job again)"};
}

}  // namespace ncclop::policy
