#include "sidecar_client.h"

#include <algorithm>
#include <limits>
#include <thread>

#include "contract/names.h"
#include "flat_json.h"
#include "log.h"

namespace nccl_k8s {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string ErrorText(const HttpResponse& response) {
  auto message = JsonStringField(response.body, "error");
  if (!message) message = JsonStringField(response.body, "message");
  return "HTTP " + std::to_string(response.status) + (message ? ": " + *message : std::string());
}

// Sleeps for the backoff (capped by the deadline) and doubles it.
void Backoff(milliseconds& backoff, const SidecarRetry& retry, Clock::time_point deadline) {
  auto until = std::min(Clock::now() + backoff, deadline);
  std::this_thread::sleep_until(until);
  backoff = std::min(backoff * 2, retry.max_backoff);
}

Status DeadlinePassed(const std::string& what, const std::string& last_error) {
  return Status(Code::kDeadlineExceeded,
                what + " before the init deadline (NCCLJOB_INIT_TIMEOUT_SECONDS)" +
                    (last_error.empty() ? "" : "; last error: " + last_error));
}

}  // namespace

Result<int> FetchAttempt(const std::string& sidecar_url, Clock::time_point deadline, const SidecarRetry& retry) {
  auto url = ParseHttpUrl(sidecar_url);
  if (!url.ok()) return Status(Code::kInvalidEnv, "NCCLJOB_SIDECAR_URL: " + url.status().message());
  milliseconds backoff = retry.first_backoff;
  std::string last_error;
  while (Clock::now() < deadline) {
    auto response = HttpRequest(*url, "GET", std::string(contract::kPathInfo), "", "", deadline);
    if (!response.ok()) {
      last_error = response.status().message();
      log::Debug("asking the sidecar for this pod's attempt failed; retrying", {{"error", last_error}});
      Backoff(backoff, retry, deadline);
      continue;
    }
    if (response->status >= 500) {
      last_error = ErrorText(*response);
      Backoff(backoff, retry, deadline);
      continue;
    }
    if (response->status != 200) {
      return Status(Code::kUnavailable, "the sidecar refused GET " + std::string(contract::kPathInfo) + ": " +
                                            ErrorText(*response));
    }
    auto attempt = JsonIntField(response->body, contract::kFieldAttempt);
    if (!attempt || *attempt < 1 || *attempt > std::numeric_limits<int>::max()) {
      return Status(Code::kUnavailable, "the sidecar's " + std::string(contract::kPathInfo) +
                                            " answer has no attempt number");
    }
    return static_cast<int>(*attempt);
  }
  return DeadlinePassed("could not learn this pod's attempt from the sidecar at " + sidecar_url, last_error);
}

Status PostId(const std::string& sidecar_url, const IdBytes& id, int attempt,
              Clock::time_point deadline, const SidecarRetry& retry) {
  auto url = ParseHttpUrl(sidecar_url);
  if (!url.ok()) return Status(Code::kInvalidEnv, "NCCLJOB_SIDECAR_URL: " + url.status().message());
  std::string body = std::string("{\"") + contract::kFieldId + "\":\"" + IdToBase64(id) + "\",\"" +
                     contract::kFieldAttempt + "\":" + std::to_string(attempt) + "}";
  milliseconds backoff = retry.first_backoff;
  std::string last_error;
  while (Clock::now() < deadline) {
    auto response = HttpRequest(*url, "POST", std::string(contract::kPathId), "application/json", body, deadline);
    if (!response.ok()) {
      last_error = response.status().message();
      log::Debug("posting the id failed; retrying", {{"error", last_error}});
      Backoff(backoff, retry, deadline);
      continue;
    }
    if (response->status == 200) return Status::Ok();
    if (response->status >= 500) {
      last_error = ErrorText(*response);
      Backoff(backoff, retry, deadline);
      continue;
    }
    return Status(Code::kUnavailable, "the sidecar refused this pod's id for attempt " +
                                          std::to_string(attempt) + ": " + ErrorText(*response));
  }
  return DeadlinePassed("could not hand the id to the sidecar at " + sidecar_url, last_error);
}

Result<std::vector<IdBytes>> ParseIdAnswer(std::string_view body, int attempt, int expected_ids) {
  auto got_attempt = JsonIntField(body, contract::kFieldAttempt);
  std::optional<std::vector<std::string>> texts = JsonStringArrayField(body, contract::kFieldIds);
  if (!texts) {
    if (auto one = JsonStringField(body, contract::kFieldId)) texts = std::vector<std::string>{*one};
  }
  if (!texts || !got_attempt) return Status(Code::kUnavailable, "the sidecar's answer has no id or attempt field");
  if (*got_attempt != attempt) {
    return Status(Code::kStaleAttempt, "the sidecar served the id of attempt " + std::to_string(*got_attempt) +
                                           ", this pod is attempt " + std::to_string(attempt) + "; refusing to use it");
  }
  if (static_cast<int>(texts->size()) != expected_ids) {
    return Status(Code::kUnavailable, "the sidecar served " + std::to_string(texts->size()) +
                                          " id(s), this job has " + std::to_string(expected_ids) +
                                          " bootstrap root(s) (NCCLJOB_BOOTSTRAP_ROOTS); refusing to use them");
  }
  std::vector<IdBytes> ids;
  for (const std::string& text : *texts) {
    auto id = IdFromBase64(text);
    if (!id) return Status(Code::kUnavailable, "the sidecar's id is not 128 bytes of base64");
    ids.push_back(*id);
  }
  return ids;
}

Result<IdBytes> FetchId(const std::string& sidecar_url, int attempt, Clock::time_point deadline,
                        const SidecarRetry& retry) {
  auto ids = FetchIds(sidecar_url, attempt, 1, deadline, retry);
  if (!ids.ok()) return ids.status();
  return ids->front();
}

Result<std::vector<IdBytes>> FetchIds(const std::string& sidecar_url, int attempt, int expected_ids,
                                      Clock::time_point deadline, const SidecarRetry& retry) {
  auto url = ParseHttpUrl(sidecar_url);
  if (!url.ok()) return Status(Code::kInvalidEnv, "NCCLJOB_SIDECAR_URL: " + url.status().message());
  milliseconds backoff = retry.first_backoff;
  std::string last_error;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now());
    if (Clock::now() >= deadline) break;
    // Ask the sidecar to answer a little before our deadline so the reply still arrives in time.
    long poll_s = std::clamp<long>(left.count() - 1, 1, retry.max_poll.count());
    auto response = HttpRequest(*url, "GET", std::string(contract::kPathId) + "?timeout=" + std::to_string(poll_s), "", "",
                                deadline);
    if (!response.ok()) {
      last_error = response.status().message();
      log::Debug("asking the sidecar for the id failed; retrying", {{"error", last_error}});
      Backoff(backoff, retry, deadline);
      continue;
    }
    backoff = retry.first_backoff;
    switch (response->status) {
      case 200:
        return ParseIdAnswer(response->body, attempt, expected_ids);
      case 204:
        continue;  // the long-poll timed out: ask again
      case 410:
        return Status(Code::kStaleAttempt, "attempt " + std::to_string(attempt) +
                                               " is over (" + ErrorText(*response) +
                                               "); this pod is stale and should exit");
      default:
        last_error = ErrorText(*response);
        if (response->status >= 500) {
          Backoff(backoff, retry, deadline);
          continue;
        }
        return Status(Code::kUnavailable, "the sidecar refused the id request: " + last_error);
    }
  }
  return DeadlinePassed("no id for attempt " + std::to_string(attempt) + " from the sidecar at " + sidecar_url,
                        last_error);
}

}  // namespace nccl_k8s
