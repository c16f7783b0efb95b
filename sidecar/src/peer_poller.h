// Standalone mode, non-root sidecar: no API server, so it long-polls the root sidecar's
// GET /v1/id (given by --peer-url) and puts what it answers on the board. The root answers for
// its own attempt; the board then decides whether that is this pod's attempt or a later one.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include <httplib.h>

#include "config.h"
#include "id_board.h"

namespace sidecar {

class PeerPoller {
 public:
  PeerPoller(const Config& config, IdBoard& board);
  ~PeerPoller();  // stops and joins

  void Start();
  void Stop();
  bool ready() const { return reached_.load(); }  // the root sidecar answered at least once

 private:
  void Run(std::stop_token stop);
  enum class Poll { kDone, kAskAgain, kFailed };
  Poll PollOnce(const std::stop_token& stop);

  const Config& config_;
  IdBoard& board_;
  std::atomic<bool> reached_{false};
  std::mutex client_mu_;
  httplib::Client* client_ = nullptr;  // guarded by client_mu_; set while a request runs
  std::jthread thread_;
};

}  // namespace sidecar
