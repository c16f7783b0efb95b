// An NcclJob as the API server hands it over (any JSON the CRD's schema might let through, or
// an older/newer version's). Property: parsing never throws, and the status survives a write
// and re-read unchanged (StatusToJson then ParseStatus is a fixed point).
#include <cstdlib>

#include "api/nccl_job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto object = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return 0;
  auto job = ncclop::api::ParseNcclJob(object);
  if (object.is_object()) {
    if (auto spec = object.find("spec"); spec != object.end()) (void)ncclop::api::ParseSpec(*spec);
    if (auto md = object.find("metadata"); md != object.end()) (void)ncclop::api::BeingDeleted(*md);
  }
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& status_in =
      object.is_object() && object.contains("status") ? object["status"] : empty;
  const nlohmann::json once = ncclop::api::StatusToJson(ncclop::api::ParseStatus(status_in));
  const nlohmann::json twice = ncclop::api::StatusToJson(ncclop::api::ParseStatus(once));
  if (once != twice) std::abort();
  if (job.ok() && ncclop::api::StatusToJson(job->status) != once) std::abort();
  return 0;
}
