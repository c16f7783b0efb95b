#include "net_probe.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <fstream>
#include <sstream>

namespace nccl_k8s {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// /proc/net/ipv6_route: dest prefixlen src srcprefixlen nexthop metric refcnt use flags iface.
std::string DefaultRouteInterfaceV6(const std::string& table) {
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string dest, plen, src, splen, hop, metric, ref, use, flags, iface;
    if (!(f >> dest >> plen >> src >> splen >> hop >> metric >> ref >> use >> flags >> iface)) continue;
    if (dest == std::string(32, '0') && plen == "00" && iface != "lo") return iface;
  }
  return "";
}

}  // namespace

std::vector<InterfaceAddress> ListInterfaces() {
  std::vector<InterfaceAddress> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || (it->ifa_flags & IFF_UP) == 0) continue;
    char text[INET6_ADDRSTRLEN] = {};
    int family = it->ifa_addr->sa_family;
    if (family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr, text, sizeof text);
    } else if (family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(it->ifa_addr)->sin6_addr, text, sizeof text);
    } else {
      continue;
    }
    out.push_back({it->ifa_name, text});
  }
  freeifaddrs(list);
  return out;
}

std::string DefaultRouteInterface() {
  std::string v4 = ParseDefaultRoute(ReadFile("/proc/net/route"));
  if (!v4.empty()) return v4;
  return DefaultRouteInterfaceV6(ReadFile("/proc/net/ipv6_route"));
}

}  // namespace nccl_k8s
