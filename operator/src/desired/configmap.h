// ConfigMap <job>-nccl: the one place the id of an attempt is published. It always names its
// attempt, so a sidecar never hands an id to a pod of another attempt.
#pragma once

#include <optional>
#include <string>

#include "desired/metadata.h"

namespace ncclop::desired {

struct PublishedId {
  std::string unique_id;     // base64, as the root sidecar wrote it
  std::string published_at;  // RFC 3339
};

// data: attempt, jobUID, and uniqueId + publishedAt when `id` is given.
Json ConfigMap(const api::NcclJob& job, int attempt, const std::optional<PublishedId>& id);

}  // namespace ncclop::desired
