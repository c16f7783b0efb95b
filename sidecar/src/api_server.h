// The id API on loopback (docs/contracts.md, "The sidecar's HTTP API"): the root trainer POSTs
// its id here, every trainer long-polls GET /v1/id for its own attempt's id.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "config.h"
#include "http_server.h"
#include "id_board.h"
#include "root_id_slot.h"

namespace sidecar {

// Called once per accepted id (not for a repeated POST of the same id): the root reports it to
// the API server, or in standalone mode puts it on the board. Must not block for long.
using RootIdSink = std::function<void(int64_t attempt, const std::string& id)>;

class ApiServer {
 public:
  ApiServer(const Config& config, IdBoard& board, RootIdSink on_root_id);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Returns the bound port (useful with port 0), or -1.
  int Bind(const HostPort& address);
  void Start();  // serves on its own thread until Stop()
  void Stop();

  int waiting() const { return server_.parked(); }  // long-polls waiting now (tests wait on it)

 private:
  HttpResponse HandlePostId(const HttpRequest& req);
  Reply HandleGetId(const HttpRequest& req);
  Reply HandleGetRootId(const HttpRequest& req);
  HttpResponse AnswerPoll(const WaitResult& result, std::chrono::steady_clock::time_point started) const;
  HttpResponse HandleInfo() const;

  const Config& config_;
  IdBoard& board_;
  RootIdSink on_root_id_;
  RootIdSlot slot_;
  HttpServer server_;
};

}  // namespace sidecar
