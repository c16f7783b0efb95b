#pragma once
// Which name the API server's certificate is checked against, when it is not the host of the
// server URL: the kubeconfig's tls-server-name, or, for a server given by IP address over a TLS
// library that cannot match IP addresses in certificates (mbedTLS 2.x checks DNS names only),
// the in-cluster service name every kube-apiserver certificate carries.
#include <optional>
#include <string>
#include <string_view>

namespace kube::internal {

// Every kube-apiserver serving certificate names its in-cluster service (the apiserver adds it
// to its own certificate; kubeadm and managed clusters do too).
inline constexpr std::string_view kInClusterServerName = "kubernetes.default.svc";

struct TlsNameRoute {
  std::string server;      // the server URL with the name as host: "https://name:port"
  std::string connect_to;  // CURLOPT_CONNECT_TO entry "name:port:address:port": where it really is
};

// server is "https://host[:port]" (IPv6 hosts in brackets). Empty when the URL's own host is
// the name to check.
std::optional<TlsNameRoute> RouteForTlsServerName(std::string_view server, std::string_view tls_server_name,
                                                  bool tls_checks_ip_addresses);

bool IsIpLiteral(std::string_view host);  // "10.0.0.1" or "[::1]"

}  // namespace kube::internal
