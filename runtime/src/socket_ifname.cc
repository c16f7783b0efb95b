#include "socket_ifname.h"

#include <climits>
#include <sstream>

namespace nccl_k8s {
namespace {

bool Matches(const IfnameSpec& spec, const std::string& pattern, const std::string& name) {
  return spec.exact ? name == pattern : name.compare(0, pattern.size(), pattern) == 0;
}

std::vector<std::string> WarningsForUserValue(const std::string& value,
                                              const std::vector<InterfaceAddress>& interfaces) {
  std::vector<std::string> warnings;
  IfnameSpec spec = ParseIfnameSpec(value);
  for (const auto& pattern : spec.names) {
    bool found = false;
    for (const auto& itf : interfaces) found = found || Matches(spec, pattern, itf.name);
    if (found) continue;
    std::string what = spec.exact ? "no interface named '" + pattern + "'"
                                  : "no interface whose name starts with '" + pattern + "'";
    warnings.push_back("NCCL_SOCKET_IFNAME='" + value + "': " + what + " exists in this pod" +
                       (spec.exclude ? " (excluding it changes nothing)"
                                     : "; NCCL may find no interface to bootstrap over"));
  }
  return warnings;
}

}  // namespace

const char* IfnameSourceName(IfnameSource source) {
  switch (source) {
    case IfnameSource::kUser: return "user";
    case IfnameSource::kPodIp: return "pod-ip";
    case IfnameSource::kDefaultRoute: return "default-route";
    case IfnameSource::kNone: return "none";
  }
  return "none";
}

IfnameSpec ParseIfnameSpec(std::string_view value) {
  IfnameSpec spec;
  if (!value.empty() && value.front() == '^') {
    spec.exclude = true;
    value.remove_prefix(1);
  }
  if (!value.empty() && value.front() == '=') {
    spec.exact = true;
    value.remove_prefix(1);
  }
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    if (!item.empty()) spec.names.emplace_back(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return spec;
}

IfnameChoice ChooseSocketIfname(const IfnameInputs& inputs) {
  IfnameChoice choice;
  if (inputs.user_value && !inputs.user_value->empty()) {
    choice.value = *inputs.user_value;
    choice.source = IfnameSource::kUser;
    choice.warnings = WarningsForUserValue(choice.value, inputs.interfaces);
    return choice;
  }
  if (!inputs.pod_ip.empty()) {
    for (const auto& itf : inputs.interfaces) {
      if (itf.ip == inputs.pod_ip) {
        choice.value = itf.name;
        choice.source = IfnameSource::kPodIp;
        return choice;
      }
    }
    choice.warnings.push_back("NCCLJOB_POD_IP=" + inputs.pod_ip +
                              " is on no interface of this process's network namespace; "
                              "falling back to the default route's interface");
  }
  if (!inputs.default_route_interface.empty()) {
    choice.value = inputs.default_route_interface;
    choice.source = IfnameSource::kDefaultRoute;
    return choice;
  }
  choice.source = IfnameSource::kNone;
  choice.warnings.push_back(
      "found neither the pod IP's interface nor a default route; NCCL_SOCKET_IFNAME stays unset "
      "and NCCL chooses (set spec.network.socketIfname to choose)");
  return choice;
}

std::string ParseDefaultRoute(std::string_view proc_net_route) {
  // Columns: Iface Destination Gateway Flags RefCnt Use Metric Mask ...; values in hex.
  std::istringstream in{std::string(proc_net_route)};
  std::string line;
  std::getline(in, line);  // header
  std::string best;
  long best_metric = LONG_MAX;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string iface, destination, gateway, flags, refcnt, use, metric, mask;
    if (!(fields >> iface >> destination >> gateway >> flags >> refcnt >> use >> metric >> mask)) continue;
    if (destination != "00000000" || mask != "00000000") continue;
    long flag_bits = std::strtol(flags.c_str(), nullptr, 16);
    if ((flag_bits & 0x1) == 0) continue;  // RTF_UP
    long m = std::strtol(metric.c_str(), nullptr, 10);
    if (m < best_metric) {
      best_metric = m;
      best = iface;
    }
  }
  return best;
}

}  // namespace nccl_k8s
