// --standalone, every sidecar but the one root of a job of one root: the id comes from the root
// sidecar(s) over HTTP (peer_poller.h: GET /v1/id of --peer-url, or GET /v1/root-id of each of
// --root-urls), and the sidecar is ready once one answered. A root of several keeps nothing
// here: its trainer's id waits in its API server for the others to ask (GET /v1/root-id).
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "id_board.h"
#include "id_source.h"
#include "peer_poller.h"

namespace sidecar {

class PeerIdSource : public IdSource {
 public:
  PeerIdSource(const Config& config, IdBoard& board) : poller_(config, board) {}

  void Start() override { poller_.Start(); }
  void Stop() override { poller_.Stop(); }
  bool Ready() const override { return poller_.ready(); }
  void Keep(int64_t /*attempt*/, const std::string& /*id*/) override {}

 private:
  PeerPoller poller_;
};

}  // namespace sidecar
