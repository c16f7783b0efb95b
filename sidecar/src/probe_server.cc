#include "probe_server.h"

#include "contract/names.h"
#include "http_replies.h"

namespace sidecar {
namespace {

// The kubelet sends one probe at a time; the rest is room for whoever else reaches this port,
// whose idle or slow connections are closed for new ones (http_server.h) so probes get through.
HttpServerLimits ProbeLimits() {
  HttpServerLimits limits;
  limits.max_connections = 64;
  limits.max_body_bytes = 0;
  return limits;
}

}  // namespace

ProbeServer::ProbeServer(const IdSource& source)
    : source_(source), server_("sidecar.probe", ProbeLimits(), "no such path; probes are /healthz and /readyz") {
  server_.Handle("GET", std::string(contract::kPathHealthz),
                 [](const HttpRequest&) -> Reply { return TextReply(200, "ok\n"); });
  server_.Handle("GET", std::string(contract::kPathReadyz), [this](const HttpRequest&) -> Reply {
    if (source_.Ready()) return TextReply(200, "ok\n");
    return TextReply(503, "not ready: the id source has not been reached yet\n");
  });
}

int ProbeServer::Bind(const HostPort& address) { return server_.Bind(address); }

void ProbeServer::Start() { server_.Start(); }

void ProbeServer::Stop() { server_.Stop(); }

}  // namespace sidecar
