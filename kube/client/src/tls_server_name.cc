#include "tls_server_name.h"

#include <arpa/inet.h>

namespace kube::internal {

bool IsIpLiteral(std::string_view host) {
  unsigned char buf[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    const std::string inner(host.substr(1, host.size() - 2));
    return inet_pton(AF_INET6, inner.c_str(), buf) == 1;
  }
  const std::string h(host);
  return inet_pton(AF_INET, h.c_str(), buf) == 1;
}

std::optional<TlsNameRoute> RouteForTlsServerName(std::string_view server, std::string_view tls_server_name,
                                                  bool tls_checks_ip_addresses) {
  constexpr std::string_view kScheme = "https://";
  if (server.substr(0, kScheme.size()) != kScheme) return std::nullopt;  // plain HTTP: no certificate
  std::string_view rest = server.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  const std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  const std::string_view authority = rest.substr(0, slash);

  std::string_view host = authority;
  std::string_view port = "443";
  const std::size_t host_end = authority.front() == '[' ? authority.find(']') : authority.find(':');
  if (authority.empty() || (authority.front() == '[' && host_end == std::string_view::npos)) return std::nullopt;
  const std::size_t colon = authority.front() == '[' ? host_end + 1 : host_end;
  if (colon < authority.size()) {
    if (authority[colon] != ':') return std::nullopt;
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }

  std::string_view name = tls_server_name;
  if (name.empty() && !tls_checks_ip_addresses && IsIpLiteral(host)) name = kInClusterServerName;
  if (name.empty() || name == host) return std::nullopt;

  TlsNameRoute route;
  route.server = std::string(kScheme) + std::string(name) + ":" + std::string(port) + std::string(path);
  route.connect_to = std::string(name) + ":" + std::string(port) + ":" + std::string(host) + ":" + std::string(port);
  return route;
}

}  // namespace kube::internal
