// ConfigureSocketIfname: the one place that writes NCCL_SOCKET_IFNAME.
#include <cstdlib>
#include <mutex>

#include "contract/env.h"
#include "log.h"
#include "net_probe.h"
#include "nccl_k8s/runtime.h"
#include "socket_ifname.h"

namespace nccl_k8s {

IfnameChoice ConfigureSocketIfname(const JobEnv& env) {
  // NCCL reads the variable once, at its first call; deciding twice could only disagree with
  // what NCCL already uses, so the first decision stands for the whole process.
  static std::once_flag once;
  static IfnameChoice choice;
  std::call_once(once, [&env] {
    IfnameInputs inputs;
    if (const char* user = std::getenv(contract::env::kNcclSocketIfname)) inputs.user_value = user;
    inputs.pod_ip = env.pod_ip;
    inputs.interfaces = ListInterfaces();
    inputs.default_route_interface = DefaultRouteInterface();
    choice = ChooseSocketIfname(inputs);
    if (choice.source != IfnameSource::kUser && !choice.value.empty()) {
      setenv(contract::env::kNcclSocketIfname, choice.value.c_str(), 1);
    }
    for (const auto& warning : choice.warnings) log::Warn(warning);
    log::Info("NCCL_SOCKET_IFNAME chosen",
              {{contract::env::kNcclSocketIfname, choice.value}, {"source", IfnameSourceName(choice.source)}});
  });
  return choice;
}

}  // namespace nccl_k8s
