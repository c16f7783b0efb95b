// The runtime's side of the sidecar's id API (docs/contracts.md, "The sidecar's HTTP API").
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "http_client.h"
#include "nccl_k8s/status.h"
#include "unique_id_codec.h"

namespace nccl_k8s {

struct SidecarRetry {
  std::chrono::milliseconds first_backoff{50};
  std::chrono::milliseconds max_backoff{1000};
  std::chrono::seconds max_poll{30};  // the longest single long-poll we ask the sidecar for
};

// The attempt this pod serves: the sidecar's GET /v1/info "attempt". After an in-place restart
// it is later than NCCLJOB_ATTEMPT, the attempt the pod was created for. A request without an
// answer (refused or closed: the sidecar is starting, or still waits to learn its attempt) and a
// 5xx are asked again until the deadline, as PostId does.
Result<int> FetchAttempt(const std::string& sidecar_url, std::chrono::steady_clock::time_point deadline,
                         const SidecarRetry& retry = {});

// Root: POST the id (JSON with the attempt, so a sidecar of another attempt refuses it). Retries
// connection errors until the deadline, since the sidecar may start after the trainer.
Status PostId(const std::string& sidecar_url, const IdBytes& id, int attempt,
              std::chrono::steady_clock::time_point deadline, const SidecarRetry& retry = {});

// Everyone else: long-poll GET /v1/id until the ids of `attempt` arrive (the answer's "ids" list,
// or its "id" from a sidecar that predates the list). 204 asks again; 410 (a later attempt exists)
// and an answer for another attempt are final errors; so is a list of another length than
// `expected_ids` (the job's NCCLJOB_BOOTSTRAP_ROOTS).
Result<std::vector<IdBytes>> FetchIds(const std::string& sidecar_url, int attempt, int expected_ids,
                                      std::chrono::steady_clock::time_point deadline,
                                      const SidecarRetry& retry = {});

// The one id of a job with one bootstrap root (FetchIds with expected_ids = 1).
Result<IdBytes> FetchId(const std::string& sidecar_url, int attempt,
                        std::chrono::steady_clock::time_point deadline, const SidecarRetry& retry = {});

// The ids of a 200 answer of GET /v1/id for a pod of `attempt` expecting `expected_ids`.
Result<std::vector<IdBytes>> ParseIdAnswer(std::string_view body, int attempt, int expected_ids);

}  // namespace nccl_k8s
