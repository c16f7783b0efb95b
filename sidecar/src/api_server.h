// The id API on loopback (docs/contracts.md, "The sidecar's HTTP API"): the root trainer POSTs
// its id here, every trainer long-polls GET /v1/id for its own attempt's id.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "config.h"
#include "http_server.h"
#include "id_board.h"
#include "id_source.h"
#include "progress_board.h"
#include "progress_listener.h"
#include "root_id_slot.h"

namespace sidecar {

class ApiServer {
 public:
  // How long a POST waits for its id to be kept before it is answered 503 (POST it again).
  static constexpr std::chrono::milliseconds kKeepWait{10000};

  // A root's POSTed id goes to `source` (IdSource::Keep), and is answered once it is kept.
  ApiServer(const Config& config, IdBoard& board, IdSource& source, std::chrono::milliseconds keep_wait = kKeepWait);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Returns the bound port (useful with port 0), or -1.
  int Bind(const HostPort& address);
  // Before Start(): GET /v1/progress shows `board`, and the listener's counts.
  void ServeProgress(const ProgressBoard& board, const ProgressListener& listener);
  void Start();  // serves on its own thread until Stop()
  void Stop();

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
  IdSource& source_;
  const std::chrono::milliseconds keep_wait_;
  RootIdSlot slot_;
  HttpServer server_;
};

}  // namespace sidecar
