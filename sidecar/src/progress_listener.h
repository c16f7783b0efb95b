// Receives the trainers' progress reports: UDP datagrams on the API's address (the same port as
// --listen), each parsed into the board on the listener's own thread. A datagram that is too
// big or does not fit the contract is dropped and counted; nothing a sender does stops it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "config.h"
#include "progress_board.h"

namespace sidecar {

class ProgressListener {
 public:
  ProgressListener(ProgressBoard& board, int world_size);
  ~ProgressListener();
  ProgressListener(const ProgressListener&) = delete;
  ProgressListener& operator=(const ProgressListener&) = delete;

  // The bound port, or -1 (*error says why).
  int Bind(const HostPort& address, std::string* error);
  void Start();  // receives on its own thread until Stop()
  void Stop();   // idempotent

  uint64_t received() const { return received_.load(std::memory_order_relaxed); }  // kept on the board
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }    // refused

 private:
  void Loop();
  void ReceiveAll();
  void Take(std::string_view datagram, bool truncated, const ReceivedAt& at);

  ProgressBoard& board_;
  const int world_size_;
  int fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop()
  std::unique_ptr<char[]> buffers_;  // the listener thread's receive buffers
  std::atomic<uint64_t> received_{0};
  std::atomic<uint64_t> dropped_{0};
  std::thread thread_;
};

}  // namespace sidecar
