#include "policy/pod_refusal.h"

namespace ncclop::policy {

bool IsMalformedPod(const kube::Status& refusal) {
  const std::string& message = refusal.message();
  if (message.rfind("admission webhook", 0) == 0) return false;
  if (refusal.reason() == "Invalid") return refusal.details_kind() == "Pod";
  if (refusal.reason() == "BadRequest") return message.find("cannot be handled as a Pod") != std::string::npos;
  return false;
}

std::string RefusalMessage(const std::string& pod, const kube::Status& refusal, std::size_t max_bytes) {
  std::string out = "the API server refused pod " + pod + ": " + refusal.message();
  if (out.size() > max_bytes) {
    out.resize(max_bytes);
    out += "...";
  }
  return out;
}

}  // namespace ncclop::policy
