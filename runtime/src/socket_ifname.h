// Which network interface NCCL should bootstrap over. Pure: the caller passes what the system
// looks like (ListInterfaces, DefaultRouteInterface), so every rule is unit-tested.
//
// Rules: a user's NCCL_SOCKET_IFNAME is kept verbatim (NCCL's syntax: "^" excludes, "=" matches
// exactly, otherwise each comma-separated entry is a name prefix), with a warning for each entry
// that matches no interface here. Otherwise the interface that holds the pod IP, else the
// default route's interface, else nothing (NCCL picks on its own).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl_k8s/runtime.h"

namespace nccl_k8s {

struct InterfaceAddress {
  std::string name;
  std::string ip;  // numeric IPv4 or IPv6 (no zone suffix)
};

struct IfnameInputs {
  std::optional<std::string> user_value;  // NCCL_SOCKET_IFNAME as found (nullopt: unset)
  std::string pod_ip;                     // NCCLJOB_POD_IP ("" when not given)
  std::vector<InterfaceAddress> interfaces;
  std::string default_route_interface;    // "" when there is none
};

IfnameChoice ChooseSocketIfname(const IfnameInputs& inputs);

// NCCL's NCCL_SOCKET_IFNAME syntax, parsed.
struct IfnameSpec {
  bool exclude = false;  // leading '^'
  bool exact = false;    // leading '=' (after '^' if both)
  std::vector<std::string> names;
};
IfnameSpec ParseIfnameSpec(std::string_view value);

// Parses /proc/net/route: the interface of the lowest-metric default route, or "".
std::string ParseDefaultRoute(std::string_view proc_net_route);

}  // namespace nccl_k8s
