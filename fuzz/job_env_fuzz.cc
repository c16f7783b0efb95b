// The env contract as a trainer container sees it (the operator injects it, but a user can
// override any variable in the pod template). Property: an accepted env is self-consistent:
// the ranks of this pod lie inside the world, the attempt is positive, the sidecar URL is http.
#include <cstdlib>
#include <map>
#include <string>

#include "fuzz_input.h"
#include "nccl_k8s/job_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  static const char* kNames[] = {"NCCLJOB_NAME", "NCCLJOB_INDEX", "NCCLJOB_REPLICAS", "NCCLJOB_GPUS_PER_POD",
                                 "NCCLJOB_WORLD_SIZE", "NCCLJOB_ATTEMPT", "NCCLJOB_SIDECAR_URL",
                                 "NCCLJOB_POD_IP", "NCCLJOB_INIT_TIMEOUT_SECONDS"};
  std::map<std::string, std::string> env;
  for (const char* name : kNames) {
    if (in.ConsumeBool()) env[name] = in.ConsumeRandomLengthString(32);
  }
  auto parsed = nccl_k8s::ParseJobEnv([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) std::abort();
    return 0;
  }
  const nccl_k8s::JobEnv& e = *parsed;
  if (e.replicas < 1 || e.index < 0 || e.index >= e.replicas || e.attempt < 1) std::abort();
  if (e.world_size != e.replicas * e.ranks_per_pod()) std::abort();
  if (e.first_rank() + e.ranks_per_pod() > e.world_size) std::abort();
  if (e.init_timeout.count() <= 0) std::abort();
  if (e.sidecar_url.rfind("http://", 0) != 0) std::abort();
  return 0;
}
