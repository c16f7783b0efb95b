#include "metrics/job_samples.h"

#include <algorithm>
#include <cstdio>

#include "api/nccl_job.h"
#include "metrics/catalog.h"

namespace ncclop::metrics {
namespace {

std::string Text(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Label values are quoted; a name or namespace holds no quote or backslash (DNS labels).
std::string Labels(const JobSample& job) {
  return "{namespace=\"" + job.namespace_ + "\",nccljob=\"" + job.name + "\"}";
}

}  // namespace

std::optional<JobSample> SampleJob(const nlohmann::json& job, api::Time now) {
  auto meta = job.find("metadata");
  if (meta == job.end() || !meta->is_object()) return std::nullopt;
  JobSample out;
  out.name = Text(*meta, "name");
  out.namespace_ = Text(*meta, "namespace");
  if (out.name.empty()) return std::nullopt;
  auto status = job.find("status");
  if (status == job.end() || !status->is_object()) return out;
  if (auto r = status->find("restarts"); r != status->end() && r->is_number_integer()) {
    out.restarts = std::max<std::int64_t>(0, r->get<std::int64_t>());
  }
  const std::string state = Text(*status, "state");
  if (state == api::state::kSucceeded || state == api::state::kFailed || state == api::state::kSuspended) return out;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return out;
  for (const auto& c : *conditions) {
    if (!c.is_object() || Text(c, "type") != api::condition::kAdmitted || Text(c, "status") != "False") continue;
    const std::string reason = Text(c, "reason");
    if (reason != api::reason::kWaitingForAdmission && reason != api::reason::kPriorityClassNotFound) continue;
    if (auto since = api::ParseTime(Text(c, "lastTransitionTime"))) {
      out.waiting_for_admission_seconds = std::max(0.0, std::chrono::duration<double>(now - *since).count());
    }
  }
  return out;
}

void RenderJobSamples(const std::vector<JobSample>& jobs, std::string* out) {
  *out += Header(kJobRestarts);
  for (const JobSample& job : jobs) {
    *out += std::string(kJobRestarts.name) + Labels(job) + " " + std::to_string(job.restarts) + "\n";
  }
  *out += Header(kJobWaitingForAdmission);
  for (const JobSample& job : jobs) {
    if (!job.waiting_for_admission_seconds) continue;
    char value[32];
    std::snprintf(value, sizeof value, "%.0f", *job.waiting_for_admission_seconds);
    *out += std::string(kJobWaitingForAdmission.name) + Labels(job) + " " + value + "\n";
  }
}

}  // namespace ncclop::metrics
