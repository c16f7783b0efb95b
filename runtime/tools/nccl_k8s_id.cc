// nccl-k8s-id: prints this pod's NCCL unique id for its attempt, for shells and for frameworks
// that take the id as bytes (CuPy's NcclCommunicator, PyTorch's ProcessGroupNCCL via a store...).
// On the root it creates the id (so the bootstrap listener lives in THIS process: the root's
// id is only usable while this process runs; see --help).
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "nccl_k8s/runtime.h"

namespace {

constexpr const char* kHelp = R"(usage: nccl-k8s-id [--format hex|base64] [--timeout SECONDS]

Prints the NCCL unique id (128 bytes) of this pod's attempt on stdout, as hex (default) or base64.
Reads the NcclJob env contract (NCCLJOB_INDEX, NCCLJOB_WORLD_SIZE, NCCLJOB_GPUS_PER_POD,
NCCLJOB_ATTEMPT, NCCLJOB_SIDECAR_URL, optional NCCLJOB_POD_IP, NCCLJOB_INIT_TIMEOUT_SECONDS).

  index 0 (root): sets NCCL_SOCKET_IFNAME if unset, calls ncclGetUniqueId and posts the id to
                  the sidecar. NCCL's bootstrap root listens inside the process that created the
                  id, so on the root, create the id in the trainer itself (the runtime library, or
                  the framework's own get_unique_id) rather than with this tool; here the id dies
                  with this process. Useful on the root for checks only.
  other pods:     long-poll the sidecar (with retries) until it serves the id of this attempt.

Python (CuPy):
  uid = bytes.fromhex(subprocess.check_output(["nccl-k8s-id"]).decode().strip())
  comm = cupy.cuda.nccl.NcclCommunicator(world, tuple(uid), rank)

Exit status: 0 id printed; 1 error (message on stderr); 2 bad usage.

  --format hex|base64   output encoding (default hex)
  --timeout SECONDS     overall deadline (default NCCLJOB_INIT_TIMEOUT_SECONDS, else 300)
  -h, --help            this text
  --version             print the program's name and version, then exit
)";

}  // namespace

int main(int argc, char** argv) {
  std::string format = "hex";
  long timeout_s = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (arg == "--version") {
      std::puts("nccl-k8s-id " NCCL_K8S_VERSION);
      return 0;
    }
    if ((arg == "--format" || arg == "--timeout") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--format") {
        format = value;
      } else {
        char* end = nullptr;
        timeout_s = std::strtol(value.c_str(), &end, 10);
        if (*end != '\0' || timeout_s <= 0) {
          std::fprintf(stderr, "nccl-k8s-id: --timeout wants a positive number of seconds, got '%s'\n", value.c_str());
          return 2;
        }
      }
      continue;
    }
    std::fprintf(stderr, "nccl-k8s-id: unknown argument '%s' (see --help)\n", argv[i]);
    return 2;
  }
  if (format != "hex" && format != "base64") {
    std::fprintf(stderr, "nccl-k8s-id: --format is hex or base64, got '%s'\n", format.c_str());
    return 2;
  }
  auto env = nccl_k8s::ReadJobEnv();
  if (!env.ok()) {
    std::fprintf(stderr, "nccl-k8s-id: %s\n", env.status().ToString().c_str());
    return 1;
  }
  auto timeout = timeout_s > 0 ? std::chrono::seconds(timeout_s) : env->init_timeout;
  auto id = nccl_k8s::ObtainUniqueId(*env, nccl_k8s::Clock::now() + timeout);
  if (!id.ok()) {
    std::fprintf(stderr, "nccl-k8s-id: %s\n", id.status().ToString().c_str());
    return 1;
  }
  std::string text = format == "hex" ? nccl_k8s::EncodeIdHex(*id) : nccl_k8s::EncodeIdBase64(*id);
  std::printf("%s\n", text.c_str());
  return 0;
}
