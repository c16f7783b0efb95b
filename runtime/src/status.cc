#include "nccl_k8s/status.h"

namespace nccl_k8s {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidEnv: return "invalid env";
    case Code::kUnavailable: return "sidecar unavailable";
    case Code::kDeadlineExceeded: return "deadline exceeded";
    case Code::kStaleAttempt: return "stale attempt";
    case Code::kNccl: return "nccl error";
    case Code::kCuda: return "cuda error";
    case Code::kNoGpu: return "no gpu";
    case Code::kInvalidArgument: return "invalid argument";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace nccl_k8s
