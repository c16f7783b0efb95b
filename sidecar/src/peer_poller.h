// Standalone mode, non-root sidecar: no API server, so it long-polls the root sidecar's
// GET /v1/id (given by --peer-url) and puts what it answers on the board. The root answers for
// its own attempt; the board then decides whether that is this pod's attempt or a later one.
// With several bootstrap roots (every sidecar, roots too): it asks each root sidecar of
// --root-urls in turn for its own trainer's id (GET /v1/root-id) and puts the list on the board
// once it has all of them for one attempt.
#pragma once

#include <atomic>
#include <cstdint>
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
  struct Answer {
    int64_t attempt = 0;
    std::string ids;      // the raw ids back to back
    std::string job_uid;
  };
  // One long-poll of `url` + `path`; kDone fills *answer with an answer for this pod's attempt
  // or a later one.
  Poll PollOnce(const std::stop_token& stop, const std::string& url, const std::string& path, Answer* answer);
  // Asks `url` + `path` until kDone or a stop; false on a stop.
  bool PollUntilAnswered(const std::stop_token& stop, const std::string& url, const std::string& path,
                         Answer* answer);

  const Config& config_;
  IdBoard& board_;
  std::atomic<bool> reached_{false};
  std::mutex client_mu_;
  httplib::Client* client_ = nullptr;  // guarded by client_mu_; set while a request runs
  std::jthread thread_;
};

}  // namespace sidecar
