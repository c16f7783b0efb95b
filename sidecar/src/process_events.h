// What the sidecar's main thread waits for: a stop signal (SIGTERM, SIGINT) or a wake from
// another thread (in place: the ConfigMap named a new attempt). One poll over a signalfd and an
// eventfd, so main() needs no thread of its own to tell the two apart.
#pragma once

namespace sidecar {

class ProcessEvents {
 public:
  enum class Event { kWoken, kSigterm, kSigint };

  // Blocks SIGTERM and SIGINT in the calling thread, and so in every thread it starts afterwards:
  // construct it in main() before any thread starts, so that only Wait() sees them.
  ProcessEvents();
  ~ProcessEvents();
  ProcessEvents(const ProcessEvents&) = delete;
  ProcessEvents& operator=(const ProcessEvents&) = delete;

  // Blocks until a stop signal or a Wake(); a signal wins when both are there. Main thread only.
  Event Wait();
  // Any thread; never blocks. Wakes made before Wait() count once.
  void Wake();

 private:
  int signal_fd_ = -1;
  int wake_fd_ = -1;
};

}  // namespace sidecar
