// ObservePod on any pod JSON (the first line names the trainer container). Property: the
// trimmed pod the informer caches (TrimPod) yields exactly the facts of the full pod, so no
// field a policy reads is trimmed away.
#include <cstdlib>
#include <string>

#include "cache/trim.h"
#include "observed/configmap.h"
#include "observed/pod.h"

namespace {

bool Same(const ncclop::observed::ObservedPod& a, const ncclop::observed::ObservedPod& b) {
  return a.name == b.name && a.index == b.index && a.attempt == b.attempt && a.phase == b.phase &&
         a.ready == b.ready && a.terminating == b.terminating && a.trainer_succeeded == b.trainer_succeeded &&
         a.failed == b.failed && a.trainer_exit_code == b.trainer_exit_code &&
         a.failure_detail == b.failure_detail && a.unique_id == b.unique_id &&
         a.unique_id_attempt == b.unique_id_attempt && a.disruption.has_value() == b.disruption.has_value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return 0;
  const std::string container(text.substr(0, nl));
  auto pod = nlohmann::json::parse(text.substr(nl + 1), nullptr, /*allow_exceptions=*/false);
  if (pod.is_discarded()) return 0;
  const auto full = ncclop::observed::ObservePod(pod, container);
  (void)ncclop::observed::ObserveConfigMap(pod);
  nlohmann::json trimmed = pod;
  ncclop::cache::TrimPod(trimmed);
  if (!Same(full, ncclop::observed::ObservePod(trimmed, container))) std::abort();
  return 0;
}
