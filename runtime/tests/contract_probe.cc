// runtime-contract-probe: prints what the C++ runtime decides, so the Python package
// (python/tests/test_runtime_agreement.py) can check it decides the same on the same inputs.
//   runtime-contract-probe job-env                    ParseJobEnv of this process's env
//   runtime-contract-probe ifname [--user V] [--pod-ip IP] [--default-route IF] [NAME=IP ...]
//                                                     ChooseSocketIfname of these inputs
//   runtime-contract-probe system                     ListInterfaces and DefaultRouteInterface here
//   runtime-contract-probe roots ROOTS REPLICAS RANKS_PER_POD
//                                                     BootstrapRootPods, and each pod's slot
//   runtime-contract-probe id-answer ATTEMPT EXPECTED_IDS
//                                                     ParseIdAnswer of stdin (a GET /v1/id body)
// One "key=value" per line; an env error prints "error=<Status::ToString()>" and exits 1.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>

#include "nccl_k8s/job_env.h"
#include "nccl_k8s/runtime.h"
#include "net_probe.h"
#include "contract/bootstrap_roots.h"
#include "sidecar_client.h"
#include "socket_ifname.h"

namespace {

int PrintJobEnv() {
  auto env = nccl_k8s::ReadJobEnv();
  if (!env.ok()) {
    std::printf("error=%s\n", env.status().ToString().c_str());
    return 1;
  }
  std::printf("index=%d\nworld_size=%d\ngpus_per_pod=%d\nattempt=%d\nreplicas=%d\ninit_timeout=%lld\n"
              "sidecar_url=%s\njob_name=%s\npod_ip=%s\nbootstrap_roots=%d\nbootstrap_roots_set=%d\nroot_slot=%d\n",
              env->index, env->world_size, env->gpus_per_pod, env->attempt, env->replicas,
              static_cast<long long>(env->init_timeout.count()), env->sidecar_url.c_str(),
              env->job_name.c_str(), env->pod_ip.c_str(), env->bootstrap_roots, env->bootstrap_roots_set ? 1 : 0,
              env->root_slot());
  return 0;
}

int PrintIfnameChoice(int argc, char** argv) {
  nccl_k8s::IfnameInputs inputs;
  for (int i = 2; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (i + 1 < argc && arg == "--user") {
      inputs.user_value = argv[++i];
    } else if (i + 1 < argc && arg == "--pod-ip") {
      inputs.pod_ip = argv[++i];
    } else if (i + 1 < argc && arg == "--default-route") {
      inputs.default_route_interface = argv[++i];
    } else if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      inputs.interfaces.push_back({std::string(arg.substr(0, eq)), std::string(arg.substr(eq + 1))});
    } else {
      std::fprintf(stderr, "runtime-contract-probe: bad argument '%s'\n", argv[i]);
      return 2;
    }
  }
  nccl_k8s::IfnameChoice choice = nccl_k8s::ChooseSocketIfname(inputs);
  std::printf("value=%s\nsource=%s\n", choice.value.c_str(), nccl_k8s::IfnameSourceName(choice.source));
  for (const auto& warning : choice.warnings) std::printf("warning=%s\n", warning.c_str());
  return 0;
}

int PrintSystem() {
  for (const auto& itf : nccl_k8s::ListInterfaces()) std::printf("interface=%s %s\n", itf.name.c_str(), itf.ip.c_str());
  std::printf("default_route=%s\n", nccl_k8s::DefaultRouteInterface().c_str());
  return 0;
}

int PrintRoots(int argc, char** argv) {
  if (argc != 5) return 2;
  int roots = std::atoi(argv[2]), replicas = std::atoi(argv[3]), per_pod = std::atoi(argv[4]);
  std::printf("pods=");
  for (int pod : contract::BootstrapRootPods(roots, replicas, per_pod)) std::printf("%d,", pod);
  std::printf("\nslots=");
  for (int i = 0; i < replicas; ++i) std::printf("%d,", contract::BootstrapRootSlot(i, roots, replicas, per_pod));
  std::printf("\n");
  return 0;
}

int PrintIdAnswer(int argc, char** argv) {
  if (argc != 4) return 2;
  std::string body((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  auto ids = nccl_k8s::ParseIdAnswer(body, std::atoi(argv[2]), std::atoi(argv[3]));
  if (!ids.ok()) {
    std::printf("error=%s\n", ids.status().ToString().c_str());
    return 1;
  }
  for (const auto& id : *ids) std::printf("id=%s\n", nccl_k8s::IdToHex(id).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "job-env") return PrintJobEnv();
  if (mode == "ifname") return PrintIfnameChoice(argc, argv);
  if (mode == "system") return PrintSystem();
  if (mode == "roots") return PrintRoots(argc, argv);
  if (mode == "id-answer") return PrintIdAnswer(argc, argv);
  std::fprintf(stderr, "usage: runtime-contract-probe job-env | ifname [--user V] [--pod-ip IP] "
                       "[--default-route IF] [NAME=IP ...] | system | roots R N G | id-answer ATTEMPT IDS < body\n");
  return 2;
}
