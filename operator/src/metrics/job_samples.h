// The per-job series (ncclop_job_*), read from the NcclJobs in the operator's cache at scrape
// time, as kube-state-metrics reads objects: nothing is counted twice across restarts of the
// operator, and a deleted job's series go with it. Pure: a job's JSON in, numbers out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/time.h"

namespace ncclop::metrics {

struct JobSample {
  std::string namespace_;
  std::string name;
  std::int64_t restarts = 0;  // status.restarts
  // While the job waits in its Kueue queue (Admitted False: WaitingForAdmission or
  // PriorityClassNotFound, neither finished nor suspended): seconds since the condition turned False.
  std::optional<double> waiting_for_admission_seconds;
};

// nullopt for an object without a name.
std::optional<JobSample> SampleJob(const nlohmann::json& job, api::Time now);

// Appends ncclop_job_restarts_total and ncclop_job_waiting_for_admission_seconds.
void RenderJobSamples(const std::vector<JobSample>& jobs, std::string* out);

}  // namespace ncclop::metrics
