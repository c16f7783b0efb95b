// runtime-netns-probe: run inside a network namespace by netns_test.sh. Lets the runtime choose
// NCCL_SOCKET_IFNAME, asks NCCL for an id, and checks that the id's bootstrap address is the
// expected IP (i.e. NCCL listens on the chosen interface).
//   runtime-netns-probe EXPECTED_IFNAME EXPECTED_IP
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "nccl_k8s/runtime.h"
#include "unique_id_codec.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: runtime-netns-probe EXPECTED_IFNAME EXPECTED_IP\n");
    return 2;
  }
  nccl_k8s::JobEnv env;
  if (const char* ip = std::getenv("NCCLJOB_POD_IP")) env.pod_ip = ip;
  nccl_k8s::IfnameChoice choice = nccl_k8s::ConfigureSocketIfname(env);
  const char* set = std::getenv("NCCL_SOCKET_IFNAME");
  ncclUniqueId id;
  if (ncclResult_t rc = ncclGetUniqueId(&id); rc != ncclSuccess) {
    std::fprintf(stderr, "FAIL: ncclGetUniqueId: %s\n", ncclGetErrorString(rc));
    return 1;
  }
  nccl_k8s::IdBytes bytes;
  std::memcpy(bytes.data(), id.internal, bytes.size());
  auto where = nccl_k8s::DecodeBootstrapAddress(bytes);
  std::printf("NCCL_SOCKET_IFNAME=%s source=%s id-address=%s:%d\n", set ? set : "(unset)",
              nccl_k8s::IfnameSourceName(choice.source), where ? where->ip.c_str() : "?", where ? where->port : 0);
  bool ok = set && std::string(set) == argv[1] && where && where->ip == argv[2];
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
