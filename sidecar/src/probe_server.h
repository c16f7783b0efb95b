// The kubelet's port: /healthz (the process answers) and /readyz (the id source is reachable).
// Nothing else is served here, because this port listens beyond loopback.
#pragma once

#include <functional>

#include <httplib.h>

#include "config.h"
#include "serving_thread.h"

namespace sidecar {

class ProbeServer {
 public:
  explicit ProbeServer(std::function<bool()> ready);
  ProbeServer(const ProbeServer&) = delete;
  ProbeServer& operator=(const ProbeServer&) = delete;

  int Bind(const HostPort& address);  // the bound port, or -1
  void Start();                       // serves on its own thread until Stop()
  void Stop();

 private:
  std::function<bool()> ready_;
  httplib::Server server_;
  ServingThread serving_{server_};  // after server_: stops before it is destroyed
};

}  // namespace sidecar
