#include "api_server.h"

#include <chrono>
#include <utility>
#include <variant>

#include "contract/names.h"
#include "contract/unique_id.h"
#include "http_replies.h"
#include "id_configmap.h"
#include "id_request.h"
#include "logging/log.h"

namespace sidecar {
namespace {

constexpr char kComponent[] = "sidecar.api";

// Enough for every trainer of a big pod and clients that misbehave (hundreds of abandoned or
// idle connections): the loop holds a connection in a few hundred bytes, not a thread.
constexpr size_t kMaxConnections = 512;

HttpServerLimits ApiLimits() {
  HttpServerLimits limits;
  limits.max_connections = kMaxConnections;
  limits.max_body_bytes = kMaxPostBodyBytes;
  return limits;
}

}  // namespace

ApiServer::ApiServer(const Config& config, IdBoard& board, IdSource& source, std::chrono::milliseconds keep_wait)
    : config_(config),
      board_(board),
      source_(source),
      keep_wait_(keep_wait),
      server_(kComponent, ApiLimits(), "no such path; the API is /v1/id, /v1/info and /v1/progress") {
  const std::string id_path(contract::kPathId);
  server_.Handle("POST", id_path, [this](const HttpRequest& req) { return HandlePostId(req); });
  server_.Handle("GET", id_path, [this](const HttpRequest& req) { return HandleGetId(req); });
  server_.Handle("GET", std::string(contract::kPathInfo), [this](const HttpRequest&) -> Reply { return HandleInfo(); });
  // Standalone with several roots there is no ConfigMap: the sidecars gather the list from each
  // root sidecar's own id (peer_poller.h).
  if (PickIdSource(config_) == IdSourceKind::kRootSidecars && config_.root()) {
    server_.Handle("GET", std::string(contract::kPathRootId), [this](const HttpRequest& req) { return HandleGetRootId(req); });
  }
  board_.SetOnChange([this] { server_.Wake(); });
  source_.SetOnKept([this] { server_.Wake(); });
}

ApiServer::~ApiServer() {
  source_.SetOnKept(nullptr);
  board_.SetOnChange(nullptr);
  server_.Stop();
}

int ApiServer::Bind(const HostPort& address) { return server_.Bind(address); }

void ApiServer::ServeProgress(const ProgressBoard& board, const ProgressListener& listener) {
  server_.Handle("GET", std::string(contract::kPathProgress), [&board, &listener](const HttpRequest&) -> Reply {
    return JsonReply(200, {{"ranks", RanksJson(board.Ranks())},
                           {"received", listener.received()},
                           {"dropped", listener.dropped()}});
  });
}

void ApiServer::Start() { server_.Start(); }

void ApiServer::Stop() { server_.Stop(); }

bool ApiServer::Kept(const std::string& id) const { return source_.Kept(config_.attempt, id); }

Reply ApiServer::HandlePostId(const HttpRequest& req) {
  if (!config_.root()) {
    return ErrorReply(403, std::string(config_.bootstrap_roots == 1 ? "only the root pod (index 0) publishes the id"
                                                                     : "only the job's bootstrap root pods publish ids") +
                               "; this is index " + std::to_string(config_.index) + ": GET /v1/id instead");
  }
  auto parsed = ParsePostBody(req.head.Header("Content-Type"), req.body, config_.attempt);
  if (auto* error = std::get_if<HttpError>(&parsed)) {
    logging::Warn(kComponent, "refused POST /v1/id",
                  {{"status", std::to_string(error->status)}, {"reason", error->message},
                   {"bytes", std::to_string(req.body.size())}});
    return ErrorReply(error->status, error->message);
  }
  const std::string id = std::get<PostedId>(parsed).id;
  // One step, asked at once and then on every wake until it answers or its time is up: read back
  // what an earlier run of this sidecar kept (a restart), accept (idempotent), wait for the keep.
  // 200 only once the id outlives this process: a sidecar killed before that leaves the POST
  // unanswered, and the trainer posts the same id to the restarted one.
  const auto started = std::chrono::steady_clock::now();
  auto step = [this, id, started](bool expired) -> std::optional<HttpResponse> {
    const std::string attempt = std::to_string(config_.attempt);
    const RecalledId recalled = source_.Recall(config_.attempt);
    if (!recalled.read) {
      if (!expired) return std::nullopt;
      return ErrorReply(503, "the sidecar could not read the id its pod may already carry for attempt " + attempt +
                                 " (the API server is not answering); POST the same id again");
    }
    if (recalled.id) slot_.Restore(*recalled.id);
    switch (slot_.Accept(id)) {
      case AcceptOutcome::kAccepted:
        logging::Info(kComponent, "accepted the root id", {{"attempt", attempt}, {"bytes", std::to_string(id.size())}});
        source_.Keep(config_.attempt, id);
        server_.Wake();  // a GET /v1/root-id may wait for it
        break;
      case AcceptOutcome::kAlreadyAccepted:
        break;
      case AcceptOutcome::kConflict:
        logging::Warn(kComponent, "refused a second, different root id", {{"attempt", attempt}});
        return ErrorReply(409, "a different id was already accepted for attempt " + attempt +
                                   "; one attempt has one id (start a new attempt instead)");
    }
    if (Kept(id)) {
      auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
      logging::Debug(kComponent, "the root id is kept; answered the POST",
                     {{"attempt", attempt}, {"waited_ms", std::to_string(waited.count())}});
      return JsonReply(200, {{contract::kFieldAttempt, config_.attempt}});
    }
    if (!expired) return std::nullopt;
    return ErrorReply(503, "the id of attempt " + attempt +
                               " is accepted but not on the pod yet (the API server has not taken it); POST the same id again");
  };
  if (std::optional<HttpResponse> now = step(false)) return std::move(*now);
  return ParkedReply{started + keep_wait_, std::move(step)};
}

Reply ApiServer::HandleGetId(const HttpRequest& req) {
  std::optional<std::string> timeout_param = req.head.Param("timeout");
  auto timeout = ParsePollTimeout(timeout_param ? std::optional<std::string_view>(*timeout_param) : std::nullopt);
  if (auto* error = std::get_if<HttpError>(&timeout)) return ErrorReply(error->status, error->message);
  auto started = std::chrono::steady_clock::now();
  WaitResult now = board_.Check(config_.attempt);
  if (now.outcome != WaitOutcome::kTimeout) return AnswerPoll(now, started);
  // Waits without a thread: the server asks again on every change of the board, answers 204 at
  // the deadline, and forgets the poll if its client leaves.
  logging::Debug(kComponent, "a long-poll waits for the id",
                 {{"attempt", std::to_string(config_.attempt)},
                  {"timeout_seconds", std::to_string(std::get<std::chrono::seconds>(timeout).count())}});
  return ParkedReply{started + std::get<std::chrono::seconds>(timeout),
                     [this, started](bool expired) -> std::optional<HttpResponse> {
                       WaitResult result = board_.Check(config_.attempt);
                       if (result.outcome == WaitOutcome::kTimeout && !expired) return std::nullopt;
                       return AnswerPoll(result, started);
                     }};
}

Reply ApiServer::HandleGetRootId(const HttpRequest& req) {
  std::optional<std::string> timeout_param = req.head.Param("timeout");
  auto timeout = ParsePollTimeout(timeout_param ? std::optional<std::string_view>(*timeout_param) : std::nullopt);
  if (auto* error = std::get_if<HttpError>(&timeout)) return ErrorReply(error->status, error->message);
  auto answer = [this]() -> std::optional<HttpResponse> {
    std::optional<std::string> id = slot_.Get();
    if (!id) return std::nullopt;
    return JsonReply(200, {{contract::kFieldId, contract::Base64Encode(*id)}, {contract::kFieldAttempt, config_.attempt}});
  };
  if (auto now = answer()) return *now;
  return ParkedReply{std::chrono::steady_clock::now() + std::get<std::chrono::seconds>(timeout),
                     [answer](bool expired) -> std::optional<HttpResponse> {
                       if (auto ready = answer()) return ready;
                       if (expired) return HttpResponse{204, "", "", {}};
                       return std::nullopt;
                     }};
}

HttpResponse ApiServer::AnswerPoll(const WaitResult& result, std::chrono::steady_clock::time_point started) const {
  auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  std::string attempt = std::to_string(config_.attempt);
  switch (result.outcome) {
    case WaitOutcome::kReady: {
      const PublishedId& published = result.published;
      std::vector<std::string> ids = SplitIds(published.id);
      logging::Info(kComponent, ids.size() == 1 ? "served the id" : "served the ids",
                    {{"attempt", attempt}, {"ids", std::to_string(ids.size())},
                     {"waited_ms", std::to_string(waited_ms.count())}});
      nlohmann::json encoded = nlohmann::json::array();
      for (const std::string& id : ids) encoded.push_back(contract::Base64Encode(id));
      nlohmann::json body = {{contract::kFieldIds, encoded},
                             {contract::kFieldAttempt, published.attempt},
                             {contract::kFieldJob, config_.job},
                             {contract::kFieldJobUid, published.job_uid.empty() ? config_.job_uid : published.job_uid}};
      // "id" only where it is the whole answer: a client that knows one id fails on a list
      // instead of joining with the first root's id alone.
      if (ids.size() == 1) body[contract::kFieldId] = encoded[0];
      return JsonReply(200, body);
    }
    case WaitOutcome::kTimeout:
      return HttpResponse{204, "", "", {}};
    case WaitOutcome::kStale:
      logging::Warn(kComponent, "this pod's attempt is over",
                    {{"attempt", attempt}, {"latest_attempt", std::to_string(result.latest_attempt)}});
      return ErrorReply(410, "attempt " + attempt + " is over: attempt " + std::to_string(result.latest_attempt) +
                                 " exists; this pod is stale and should exit");
    case WaitOutcome::kClosed:
      break;
  }
  return ErrorReply(503, "the sidecar is shutting down");
}

HttpResponse ApiServer::HandleInfo() const {
  return JsonReply(200, {{"job", config_.job}, {"namespace", config_.name_space}, {"index", config_.index},
                       {"replicas", config_.replicas}, {"worldSize", config_.world_size},
                       {"gpusPerPod", config_.gpus_per_pod}, {"attempt", config_.attempt},
                         {"root", config_.root()}, {"bootstrapRoots", config_.bootstrap_roots}});
}

}  // namespace sidecar
