#include "peer_poller.h"

#include <nlohmann/json.hpp>

#include "contract/names.h"
#include "contract/unique_id.h"
#include "id_request.h"
#include "kube/backoff.h"
#include "logging/log.h"

namespace sidecar {
namespace {

constexpr char kComponent[] = "sidecar.peer";
constexpr int kPollSeconds = 30;

}  // namespace

PeerPoller::PeerPoller(const Config& config, IdBoard& board) : config_(config), board_(board) {}

PeerPoller::~PeerPoller() { Stop(); }

void PeerPoller::Start() {
  logging::Info(kComponent, "asking the root sidecar for the id",
                {{"peer", config_.peer_url}, {"attempt", std::to_string(config_.attempt)}});
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void PeerPoller::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  {
    // Cuts a long-poll in flight short instead of waiting out its timeout.
    std::lock_guard<std::mutex> lock(client_mu_);
    if (client_) client_->stop();
  }
  thread_.join();
}

PeerPoller::Poll PeerPoller::PollOnce(const std::stop_token& stop) {
  httplib::Client client(config_.peer_url);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(kPollSeconds + 10));
  {
    // Checked under the lock Stop() takes, so a stop never slips in before client_ is set.
    std::lock_guard<std::mutex> lock(client_mu_);
    if (stop.stop_requested()) return Poll::kDone;
    client_ = &client;
  }
  httplib::Result result = client.Get(std::string(contract::kPathId) + "?timeout=" + std::to_string(kPollSeconds));
  {
    std::lock_guard<std::mutex> lock(client_mu_);
    client_ = nullptr;
  }
  if (!result) {
    logging::Debug(kComponent, "root sidecar not reachable", {{"error", httplib::to_string(result.error())}});
    return Poll::kFailed;
  }
  reached_ = true;
  if (result->status == 204) return Poll::kAskAgain;
  if (result->status != 200) {
    logging::Warn(kComponent, "root sidecar refused", {{"status", std::to_string(result->status)}});
    return Poll::kFailed;
  }
  nlohmann::json body = nlohmann::json::parse(result->body, nullptr, false);
  if (body.is_discarded() || !body.contains(contract::kFieldId) || !body[contract::kFieldId].is_string() ||
      !body.contains(contract::kFieldAttempt) || !body[contract::kFieldAttempt].is_number_integer()) {
    logging::Warn(kComponent, "root sidecar's answer is not {\"id\",\"attempt\"}", {{"bytes", std::to_string(result->body.size())}});
    return Poll::kFailed;
  }
  std::optional<std::string> raw = contract::Base64Decode(body[contract::kFieldId].get<std::string>());
  if (!raw || raw->size() != kUniqueIdBytes) {
    logging::Warn(kComponent, "root sidecar's id is not 128 bytes of base64");
    return Poll::kFailed;
  }
  int64_t attempt = body[contract::kFieldAttempt].get<int64_t>();
  std::string job_uid = body.value(contract::kFieldJobUid, "");
  board_.Observe(attempt, std::move(raw), std::move(job_uid));
  logging::Info(kComponent, "got an id from the root sidecar",
                {{"root_attempt", std::to_string(attempt)}, {"pod_attempt", std::to_string(config_.attempt)}});
  // An older attempt's id means the root has not restarted yet: keep asking.
  return attempt >= config_.attempt ? Poll::kDone : Poll::kFailed;
}

void PeerPoller::Run(std::stop_token stop) {
  kube::Backoff backoff(kube::BackoffPolicy{std::chrono::milliseconds(100), std::chrono::milliseconds(5000), 2.0, 0.5});
  while (!stop.stop_requested()) {
    Poll poll = PollOnce(stop);
    if (poll == Poll::kDone) return;
    if (poll == Poll::kAskAgain) {
      backoff.Reset();
      continue;
    }
    // Waits a little so a missing or broken peer is not hammered.
    if (!kube::SleepFor(backoff.Next(), stop)) return;
  }
}

}  // namespace sidecar
