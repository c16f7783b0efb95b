// Uses the installed C++ API the way a trainer would, without a GPU or a sidecar: the env
// contract is checked first, so a missing contract is reported with every variable named.
#include <nccl_k8s/runtime.h>

#include <cstdio>

int main() {
  nccl_k8s::ReportProgress(1, 10, {{"loss", 0.5}});  // without the env contract: a no-op
  nccl_k8s::ReportProgressDone();
  auto comms = nccl_k8s::Init();
  if (comms.ok()) return 3;  // cannot succeed without the env contract
  std::printf("%s\n", comms.status().ToString().c_str());
  return comms.status().code() == nccl_k8s::Code::kInvalidEnv ? 0 : 4;
}
