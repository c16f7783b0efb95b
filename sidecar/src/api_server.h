// The id API on loopback (docs/contracts.md, "The sidecar's HTTP API"): the root trainer POSTs
// its id here, every trainer long-polls GET /v1/id for its own attempt's id.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "config.h"
#include "http_server.h"
#include "id_board.h"
#include "root_id_slot.h"

namespace sidecar {

// Where a root sidecar keeps the id its trainer POSTed so that it outlives this process: the
// pod's annotations (RootReporter), or in standalone mode the board. The POST is answered 200
// only once `kept` says so; a sidecar killed before that leaves the POST unanswered, and the
// trainer POSTs the same id again to the restarted sidecar (docs/contracts.md).
struct RecalledId {
  bool read = false;              // false: not read yet (the API server is away)
  std::optional<std::string> id;  // the id kept for the attempt, if any
};

struct RootIdKeeper {
  // Called once per accepted id (not for a repeated POST of the same id). Must not block.
  std::function<void(int64_t attempt, const std::string& id)> keep;
  // True once `id` of `attempt` is kept. Empty: kept as soon as `keep` returned.
  std::function<bool(int64_t attempt, const std::string& id)> kept;
  // What an earlier run of this sidecar kept for `attempt` (a restarted sidecar reads it back
  // first): a POST is answered 503 until it is read, then a different id 409, the same one 200.
  // Empty: nothing outlives the process.
  std::function<RecalledId(int64_t attempt)> recall;
};

class ApiServer {
 public:
  // How long a POST waits for its id to be kept before it is answered 503 (POST it again).
  static constexpr std::chrono::milliseconds kKeepWait{10000};

  ApiServer(const Config& config, IdBoard& board, RootIdKeeper keeper,
            std::chrono::milliseconds keep_wait = kKeepWait);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Returns the bound port (useful with port 0), or -1.
  int Bind(const HostPort& address);
  void Start();  // serves on its own thread until Stop()
  void Stop();
  void Wake();  // any thread: the keeper kept an id (or the board changed); waiting replies are asked again

  int waiting() const { return server_.parked(); }  // long-polls waiting now (tests wait on it)

 private:
  Reply HandlePostId(const HttpRequest& req);
  bool Kept(const std::string& id) const;
  Reply HandleGetId(const HttpRequest& req);
  Reply HandleGetRootId(const HttpRequest& req);
  HttpResponse AnswerPoll(const WaitResult& result, std::chrono::steady_clock::time_point started) const;
  HttpResponse HandleInfo() const;

  const Config& config_;
  IdBoard& board_;
  RootIdKeeper keeper_;
  const std::chrono::milliseconds keep_wait_;
  RootIdSlot slot_;
  HttpServer server_;
};

}  // namespace sidecar
