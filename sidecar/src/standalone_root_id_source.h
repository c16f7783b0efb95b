// --standalone, the job's one root (no API server): the id its trainer posts goes straight on
// this sidecar's board, which serves it to its own trainer's GETs and to the other sidecars'
// long-polls (peer_id_source.h). Nothing outlives the process, and nothing is there to reach:
// ready at once.
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "id_board.h"
#include "id_source.h"

namespace sidecar {

class StandaloneRootIdSource : public IdSource {
 public:
  StandaloneRootIdSource(const Config& config, IdBoard& board) : config_(config), board_(board) {}

  void Start() override {}
  void Stop() override {}
  bool Ready() const override { return true; }
  void Keep(int64_t attempt, const std::string& id) override { board_.Observe(attempt, id, config_.job_uid); }

 private:
  const Config& config_;
  IdBoard& board_;
};

}  // namespace sidecar
