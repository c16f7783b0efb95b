// The kubelet's port: /healthz (the process answers) and /readyz (the id source is reachable).
// Nothing else is served here, because this port listens beyond loopback.
#pragma once

#include "config.h"
#include "http_server.h"
#include "id_source.h"

namespace sidecar {

class ProbeServer {
 public:
  explicit ProbeServer(const IdSource& source);  // /readyz asks source.Ready()
  ProbeServer(const ProbeServer&) = delete;
  ProbeServer& operator=(const ProbeServer&) = delete;

  int Bind(const HostPort& address);  // the bound port, or -1
  void Start();                       // serves on its own thread until Stop()
  void Stop();

 private:
  const IdSource& source_;
  HttpServer server_;
};

}  // namespace sidecar
