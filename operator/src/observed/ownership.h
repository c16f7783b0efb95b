// Which job an object belongs to: the work-queue key of a job (namespace/name), the key of the
// job a child names in its nccl.dev/job-name label, and whether the child's owner references
// carry the job's UID (a child of a deleted job of the same name does not). Pure.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ncclop::observed {

std::string JobKey(std::string_view name_space, std::string_view name);

// namespace/<nccl.dev/job-name label>; "" when the object has no such label.
std::string OwningJobKey(const nlohmann::json& child);

// True when an ownerReference of `object` carries `uid`.
bool OwnedBy(const nlohmann::json& object, std::string_view uid);

}  // namespace ncclop::observed
