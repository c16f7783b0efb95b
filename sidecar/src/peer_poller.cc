#include "peer_poller.h"

#include <nlohmann/json.hpp>

#include "contract/names.h"
#include "contract/unique_id.h"
#include "id_configmap.h"
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
  if (config_.root_urls.empty()) {
    logging::Info(kComponent, "asking the root sidecar for the id",
                  {{"peer", config_.peer_url}, {"attempt", std::to_string(config_.attempt)}});
  } else {
    logging::Info(kComponent, "asking every root sidecar for its id",
                  {{"roots", std::to_string(config_.root_urls.size())}, {"attempt", std::to_string(config_.attempt)}});
  }
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

PeerPoller::Poll PeerPoller::PollOnce(const std::stop_token& stop, const std::string& url, const std::string& path,
                                      Answer* answer) {
  httplib::Client client(url);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(kPollSeconds + 10));
  {
    // Checked under the lock Stop() takes, so a stop never slips in before client_ is set.
    std::lock_guard<std::mutex> lock(client_mu_);
    if (stop.stop_requested()) return Poll::kDone;
    client_ = &client;
  }
  httplib::Result result = client.Get(path + "?timeout=" + std::to_string(kPollSeconds));
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
  if (body.is_discarded() || !body.is_object() || !body.contains(contract::kFieldAttempt) ||
      !body[contract::kFieldAttempt].is_number_integer()) {
    logging::Warn(kComponent, "root sidecar's answer is not {\"ids\",\"attempt\"}", {{"bytes", std::to_string(result->body.size())}});
    return Poll::kFailed;
  }
  std::string list;  // the list form of ids, as the ConfigMap holds it
  if (auto ids = body.find(contract::kFieldIds); ids != body.end() && ids->is_array()) {
    for (const auto& id : *ids) {
      if (!list.empty()) list += contract::kIdListSeparator;
      list += id.is_string() ? id.get<std::string>() : "";
    }
  } else if (auto id = body.find(contract::kFieldId); id != body.end() && id->is_string()) {
    list = id->get<std::string>();
  }
  std::string problem;
  std::optional<std::string> raw = DecodeIdList(list, &problem);
  if (!raw) {
    logging::Warn(kComponent, "root sidecar's ids are not 128 bytes of base64 each", {{"problem", problem}});
    return Poll::kFailed;
  }
  answer->attempt = body[contract::kFieldAttempt].get<int64_t>();
  answer->ids = std::move(*raw);
  answer->job_uid = body.value(contract::kFieldJobUid, "");
  logging::Info(kComponent, "got an answer from a root sidecar",
                {{"peer", url}, {"root_attempt", std::to_string(answer->attempt)},
                 {"pod_attempt", std::to_string(config_.attempt)}});
  // An older attempt's id means the root has not restarted yet: keep asking.
  return answer->attempt >= config_.attempt ? Poll::kDone : Poll::kFailed;
}

bool PeerPoller::PollUntilAnswered(const std::stop_token& stop, const std::string& url, const std::string& path,
                                   Answer* answer) {
  kube::Backoff backoff(kube::BackoffPolicy{std::chrono::milliseconds(100), std::chrono::milliseconds(5000), 2.0, 0.5});
  while (!stop.stop_requested()) {
    Poll poll = PollOnce(stop, url, path, answer);
    if (poll == Poll::kDone) return !stop.stop_requested();
    if (poll == Poll::kAskAgain) {
      backoff.Reset();
      continue;
    }
    // Waits a little so a missing or broken peer is not hammered.
    if (!kube::SleepFor(backoff.Next(), stop)) return false;
  }
  return false;
}

void PeerPoller::Run(std::stop_token stop) {
  Answer answer;
  if (config_.root_urls.empty()) {
    if (PollUntilAnswered(stop, config_.peer_url, std::string(contract::kPathId), &answer)) {
      board_.Observe(answer.attempt, std::move(answer.ids), std::move(answer.job_uid));
    }
    return;
  }
  std::string list;
  for (const std::string& url : config_.root_urls) {
    if (!PollUntilAnswered(stop, url, std::string(contract::kPathRootId), &answer)) return;
    if (answer.attempt > config_.attempt || answer.ids.size() != kUniqueIdBytes) {
      board_.Observe(answer.attempt, std::nullopt);  // a later attempt: this pod is stale
      return;
    }
    list += answer.ids;
  }
  board_.Observe(config_.attempt, std::move(list), config_.job_uid);
}

}  // namespace sidecar
