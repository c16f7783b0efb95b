#include "probe_server.h"

#include <utility>

#include "http_replies.h"

namespace sidecar {

ProbeServer::ProbeServer(std::function<bool()> ready) : ready_(std::move(ready)) {
  server_.new_task_queue = [] { return new httplib::ThreadPool(2); };
  server_.set_payload_max_length(0);
  server_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server_.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    if (ready_()) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content("not ready: the id source has not been reached yet\n", "text/plain");
    }
  });
  RefuseOtherMethods(server_, "/healthz", "GET");
  RefuseOtherMethods(server_, "/readyz", "GET");
}

int ProbeServer::Bind(const HostPort& address) {
  if (address.port == 0) return server_.bind_to_any_port(address.host);
  return server_.bind_to_port(address.host, address.port) ? address.port : -1;
}

void ProbeServer::Start() { serving_.Start(); }

void ProbeServer::Stop() { serving_.Stop(); }

}  // namespace sidecar
