// A small asynchronous HTTP/1.1 server (Boost.Beast) for /metrics, /healthz and /readyz. It
// runs on its own thread and io_context, so a slow scraper never holds up a reconcile, and
// handlers only read atomics or render text. A request must arrive whole within 30 s; at most
// kDefaultMaxConnections are open (a new one closes the oldest); accept errors (out of file
// descriptors) back off 100 ms instead of spinning. Optionally over TLS (Boost.Asio's OpenSSL
// stream), and behind a gate that may answer a request itself (401, 403) before its handler:
// the gate may block on the API server, so it runs on a thread of its own, never on the I/O one.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "kube/status.h"

namespace ncclop::http {

inline constexpr std::size_t kDefaultMaxConnections = 64;

struct Reply {
  int code = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using Handler = std::function<Reply()>;
// Sees a request's Authorization header; nullopt lets it through to its handler, a Reply is sent
// instead. Called on the server's gate thread, one request at a time.
using Gate = std::function<std::optional<Reply>(const std::string& authorization)>;

// "host:port", ":port" (all interfaces) or "port". Port 0 picks a free one.
struct BindAddress {
  std::string host;
  unsigned short port = 0;
};
kube::Result<BindAddress> ParseBindAddress(const std::string& text);

class Server {
 public:
  Server();
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void Handle(const std::string& path, Handler handler);  // before Start; GET and HEAD only
  // Open connections at most (before Start); a new one beyond it closes the oldest.
  void SetMaxConnections(std::size_t limit);
  // Serve HTTPS with this certificate chain and private key (PEM), before Start.
  kube::Status UseTls(const std::string& cert_pem, const std::string& key_pem);
  void SetGate(Gate gate);  // before Start
  kube::Status Start(const BindAddress& address);
  void Stop();
  unsigned short port() const { return port_; }  // the bound port (after Start)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::map<std::string, Handler> handlers_;
  unsigned short port_ = 0;
};

}  // namespace ncclop::http
