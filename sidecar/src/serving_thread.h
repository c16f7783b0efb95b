// Runs an httplib::Server's accept loop on its own thread and stops it reliably.
// httplib's stop() does nothing until the loop has marked itself running, so a stop that
// comes right after the start would be lost and join() would hang; Stop() waits for it.
#pragma once

#include <atomic>
#include <thread>

#include <httplib.h>

namespace sidecar {

class ServingThread {
 public:
  explicit ServingThread(httplib::Server& server) : server_(server) {}
  ~ServingThread() { Stop(); }
  ServingThread(const ServingThread&) = delete;
  ServingThread& operator=(const ServingThread&) = delete;

  void Start();  // after the server was bound
  void Stop();   // idempotent

 private:
  httplib::Server& server_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace sidecar
