// The metadata every object made for a job carries: its deterministic name, the job label,
// and a controller ownerReference so deleting the NcclJob lets the garbage collector delete
// the object (blockOwnerDeletion makes foreground deletion wait for it).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/nccl_job.h"

namespace ncclop::desired {

using Json = nlohmann::json;

Json OwnerReference(const api::NcclJob& job);
// {name, namespace, labels: {nccl.dev/job-name}, ownerReferences: [...]}.
Json ObjectMetadata(const api::NcclJob& job, const std::string& name);

}  // namespace ncclop::desired
