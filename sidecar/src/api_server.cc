#include "api_server.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <variant>

#include "base64.h"
#include "http_replies.h"
#include "id_request.h"
#include "logging/log.h"

namespace sidecar {
namespace {

constexpr char kComponent[] = "sidecar.api";

// Every trainer of the pod may hold a long-poll at once; leave room for /v1/info and the POST
// so a full set of waiters never starves them.
size_t WorkerThreads(const Config& config) {
  return static_cast<size_t>(std::max(config.gpus_per_pod, 1)) + 4;
}

}  // namespace

ApiServer::ApiServer(const Config& config, IdBoard& board, RootIdSink on_root_id)
    : config_(config), board_(board), on_root_id_(std::move(on_root_id)) {
  size_t threads = WorkerThreads(config);
  server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // httplib answers 413 itself before the handler runs.
  server_.set_payload_max_length(kMaxPostBodyBytes);

  server_.Post("/v1/id", [this](const auto& req, auto& res) { HandlePostId(req, res); });
  server_.Get("/v1/id", [this](const auto& req, auto& res) { HandleGetId(req, res); });
  server_.Get("/v1/info", [this](const auto& req, auto& res) { HandleInfo(req, res); });
  RefuseOtherMethods(server_, "/v1/id", "GET, POST");
  RefuseOtherMethods(server_, "/v1/info", "GET");
  server_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404) ReplyError(res, 404, "no such path; the API is /v1/id and /v1/info");
    if (res.status == 413) ReplyError(res, 413, "body over 4096 bytes; the id is 128 bytes");
  });
}

int ApiServer::Bind(const HostPort& address) {
  if (address.port == 0) return server_.bind_to_any_port(address.host);
  return server_.bind_to_port(address.host, address.port) ? address.port : -1;
}

void ApiServer::Start() { serving_.Start(); }

void ApiServer::Stop() { serving_.Stop(); }

void ApiServer::HandlePostId(const httplib::Request& req, httplib::Response& res) {
  if (!config_.root()) {
    ReplyError(res, 403, "only the root pod (index 0) publishes the id; this is index " +
                             std::to_string(config_.index) + ": GET /v1/id instead");
    return;
  }
  auto parsed = ParsePostBody(req.get_header_value("Content-Type"), req.body, config_.attempt);
  if (auto* error = std::get_if<HttpError>(&parsed)) {
    logging::Warn(kComponent, "refused POST /v1/id",
                  {{"status", std::to_string(error->status)}, {"reason", error->message},
                   {"bytes", std::to_string(req.body.size())}});
    ReplyError(res, error->status, error->message);
    return;
  }
  const std::string& id = std::get<PostedId>(parsed).id;
  std::string attempt = std::to_string(config_.attempt);
  switch (slot_.Accept(id)) {
    case AcceptOutcome::kAccepted:
      logging::Info(kComponent, "accepted the root id", {{"attempt", attempt}, {"bytes", std::to_string(id.size())}});
      on_root_id_(config_.attempt, id);
      break;
    case AcceptOutcome::kAlreadyAccepted:
      logging::Debug(kComponent, "the same root id again", {{"attempt", attempt}});
      break;
    case AcceptOutcome::kConflict:
      logging::Warn(kComponent, "refused a second, different root id", {{"attempt", attempt}});
      ReplyError(res, 409, "a different id was already accepted for attempt " + attempt +
                               "; one attempt has one id (start a new attempt instead)");
      return;
  }
  ReplyJson(res, 200, {{"attempt", config_.attempt}});
}

void ApiServer::HandleGetId(const httplib::Request& req, httplib::Response& res) {
  std::optional<std::string> timeout_param;  // owned: get_param_value returns a copy
  if (req.has_param("timeout")) timeout_param = req.get_param_value("timeout");
  auto timeout = ParsePollTimeout(timeout_param ? std::optional<std::string_view>(*timeout_param) : std::nullopt);
  if (auto* error = std::get_if<HttpError>(&timeout)) {
    ReplyError(res, error->status, error->message);
    return;
  }
  auto started = std::chrono::steady_clock::now();
  WaitResult result = board_.WaitFor(config_.attempt, started + std::get<std::chrono::seconds>(timeout));
  auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  std::string attempt = std::to_string(config_.attempt);
  switch (result.outcome) {
    case WaitOutcome::kReady: {
      const PublishedId& published = result.published;
      logging::Info(kComponent, "served the id", {{"attempt", attempt}, {"waited_ms", std::to_string(waited_ms.count())}});
      ReplyJson(res, 200, {{"id", Base64Encode(published.id)}, {"attempt", published.attempt},
                           {"job", config_.job},
                           {"jobUID", published.job_uid.empty() ? config_.job_uid : published.job_uid}});
      return;
    }
    case WaitOutcome::kTimeout:
      res.status = 204;
      return;
    case WaitOutcome::kStale:
      logging::Warn(kComponent, "this pod's attempt is over",
                    {{"attempt", attempt}, {"latest_attempt", std::to_string(result.latest_attempt)}});
      ReplyError(res, 410, "attempt " + attempt + " is over: attempt " + std::to_string(result.latest_attempt) +
                               " exists; this pod is stale and should exit");
      return;
    case WaitOutcome::kClosed:
      ReplyError(res, 503, "the sidecar is shutting down");
      return;
  }
}

void ApiServer::HandleInfo(const httplib::Request&, httplib::Response& res) {
  ReplyJson(res, 200, {{"job", config_.job}, {"namespace", config_.name_space}, {"index", config_.index},
                       {"replicas", config_.replicas}, {"worldSize", config_.world_size},
                       {"gpusPerPod", config_.gpus_per_pod}, {"attempt", config_.attempt},
                       {"root", config_.root()}});
}

}  // namespace sidecar
