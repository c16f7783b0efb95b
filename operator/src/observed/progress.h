// The progress report pod 0's sidecar puts on its pod (contract::kAnnotationProgress), read for
// status.progress, and which of two reports is the newer. Pure: the annotation is written by a
// container of the user's pod, so anything that is not a well-formed report is ignored.
#pragma once

#include <optional>
#include <string_view>

#include "api/nccl_job.h"

namespace ncclop::observed {

// nullopt unless `annotation` is a JSON object with an integer step >= 0, an attempt >= 1 and an
// RFC 3339 time; a total that is not a positive integer is dropped, and so is every metric beyond
// contract::kProgressMaxMetrics or whose name or value is not one (a name of letters, digits and
// "_.-/" up to contract::kProgressMetricNameMax; a finite number, kept as the report wrote it).
std::optional<api::Progress> ParseProgressAnnotation(std::string_view annotation);

// Whether `report` should replace `shown` in status.progress: a later attempt, or the same attempt
// reported at a later time (a pod made again starts with no report, and an old one is kept).
bool IsNewerProgress(const api::Progress& report, const std::optional<api::Progress>& shown);

}  // namespace ncclop::observed
