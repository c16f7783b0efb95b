#include "nccl_version.h"

namespace nccl_k8s {

std::string NcclVersionString(int code) {
  if (code <= 0) return "unknown";
  int major = 0, minor = 0, patch = 0;
  if (code >= 20900) {
    major = code / 10000;
    minor = (code % 10000) / 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = (code % 1000) / 100;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

Status RequireNccl(int loaded, int needed, std::string_view feature) {
  if (loaded >= needed) return Status::Ok();
  return Status(Code::kInvalidArgument,
                std::string(feature) + " needs NCCL " + NcclVersionString(needed) + " or newer, but this process loaded NCCL " +
                    NcclVersionString(loaded) + " (its libnccl.so.2); use a newer NCCL in the image, or do without " +
                    std::string(feature));
}

}  // namespace nccl_k8s
