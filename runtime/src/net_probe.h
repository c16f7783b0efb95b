// What this process's network namespace looks like (the I/O half of socket_ifname.h).
#pragma once

#include <string>
#include <vector>

#include "socket_ifname.h"

namespace nccl_k8s {

// Every IPv4/IPv6 address of every interface that is up (getifaddrs).
std::vector<InterfaceAddress> ListInterfaces();
// The default route's interface from /proc/net/route (IPv4), then /proc/net/ipv6_route; "" if none.
std::string DefaultRouteInterface();

}  // namespace nccl_k8s
