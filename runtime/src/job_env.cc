#include "nccl_k8s/job_env.h"

#include <cctype>

#include <charconv>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "contract/bootstrap_roots.h"
#include "contract/env.h"

namespace nccl_k8s {
namespace {

namespace env = contract::env;

// Collects every problem so that one error message names them all.
class Problems {
 public:
  void Add(std::string problem) { list_.push_back(std::move(problem)); }
  bool empty() const { return list_.empty(); }
  std::string Join() const {
    std::string out;
    for (const auto& p : list_) out.append(out.empty() ? "" : "; ").append(p);
    return out;
  }

 private:
  std::vector<std::string> list_;
};

std::optional<long> ParseInt(std::string_view text) {
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// Reads an integer in [min, max]; records a problem when it is required and missing, or malformed.
std::optional<int> ReadInt(const EnvLookup& lookup, const char* name, long min, long max,
                           bool required, Problems& problems) {
  const char* raw = lookup(name);
  if (raw == nullptr || *raw == '\0') {
    if (required) problems.Add(std::string(name) + " is not set");
    return std::nullopt;
  }
  auto value = ParseInt(raw);
  if (!value || *value < min || *value > max) {
    problems.Add(std::string(name) + "='" + raw + "' is not an integer in [" +
                 std::to_string(min) + ", " + std::to_string(max) + "]");
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

constexpr long kMaxCount = 1 << 20;

const char* ProcessEnv(const char* name) { return std::getenv(name); }

}  // namespace

Result<JobEnv> ParseJobEnv(const EnvLookup& lookup) {
  Problems problems;
  JobEnv env;
  auto index = ReadInt(lookup, env::kIndex, 0, kMaxCount, true, problems);
  auto world = ReadInt(lookup, env::kWorldSize, 1, kMaxCount, true, problems);
  auto gpus = ReadInt(lookup, env::kGpusPerPod, 0, 1024, true, problems);
  auto attempt = ReadInt(lookup, env::kAttempt, 1, kMaxCount, true, problems);
  auto replicas = ReadInt(lookup, env::kReplicas, 1, kMaxCount, false, problems);
  auto timeout = ReadInt(lookup, env::kInitTimeoutSeconds, 1, 7 * 24 * 3600, false, problems);
  auto roots = ReadInt(lookup, env::kBootstrapRoots, 1, kMaxCount, false, problems);

  const char* url = lookup(env::kSidecarUrl);
  if (url == nullptr || *url == '\0') {
    problems.Add("NCCLJOB_SIDECAR_URL is not set");
  } else if (std::string_view(url).substr(0, 7) != "http://") {
    problems.Add(std::string("NCCLJOB_SIDECAR_URL='") + url +
                 "' is not an http:// URL (the sidecar listens on http://127.0.0.1:8471)");
  } else {
    env.sidecar_url = url;
  }
  if (const char* name = lookup(env::kJobName)) env.job_name = name;
  if (const char* ip = lookup(env::kPodIp)) env.pod_ip = ip;

  if (index) env.index = *index;
  if (world) env.world_size = *world;
  if (gpus) env.gpus_per_pod = *gpus;
  if (attempt) env.attempt = *attempt;
  if (timeout) env.init_timeout = std::chrono::seconds(*timeout);
  if (roots) {
    env.bootstrap_roots = *roots;
    env.bootstrap_roots_set = true;
  }

  if (world && gpus) {
    int per_pod = env.ranks_per_pod();
    if (*world % per_pod != 0) {
      problems.Add("NCCLJOB_WORLD_SIZE=" + std::to_string(*world) +
                   " is not a multiple of the ranks per pod (" + std::to_string(per_pod) + ")");
    } else {
      env.replicas = *world / per_pod;
      if (replicas && *replicas != env.replicas) {
        problems.Add("NCCLJOB_REPLICAS=" + std::to_string(*replicas) +
                     " disagrees with NCCLJOB_WORLD_SIZE / max(NCCLJOB_GPUS_PER_POD, 1) = " +
                     std::to_string(env.replicas));
      }
      if (roots && *roots > env.replicas) {
        problems.Add("NCCLJOB_BOOTSTRAP_ROOTS=" + std::to_string(*roots) + " is more than the number of pods (" +
                     std::to_string(env.replicas) + ")");
        env.bootstrap_roots = 1;
      }
      if (index && *index >= env.replicas) {
        problems.Add("NCCLJOB_INDEX=" + std::to_string(*index) + " is not below the number of pods (" +
                     std::to_string(env.replicas) + ")");
      }
    }
  }

  if (!problems.empty()) {
    return Status(Code::kInvalidEnv,
                  problems.Join() +
                      ". The NcclJob operator injects these into every container; when running by "
                      "hand, export them (see docs/contracts.md, 'Env injected').");
  }
  return env;
}

Result<bool> ParseBlockingCommMode(const EnvLookup& lookup) {
  const char* raw = lookup(env::kCommMode);
  if (raw == nullptr || *raw == '\0') return true;  // plain blocking NCCL communicators by default
  std::string value;
  for (const char* c = raw; *c != '\0'; ++c) {
    if (*c == '-' || *c == '_') continue;
    value.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(*c))));
  }
  if (value == "blocking") return true;
  if (value == "nonblocking") return false;
  return Status(Code::kInvalidEnv, std::string("NCCL_K8S_COMM_MODE='") + raw +
                                       "' is neither 'blocking' (the default) nor 'nonblocking'; unset it or "
                                       "pick one (runtime/README.md explains the choice)");
}

int JobEnv::root_slot() const {
  return contract::BootstrapRootSlot(index, bootstrap_roots, replicas, ranks_per_pod());
}

Result<JobEnv> ReadJobEnv() { return ParseJobEnv(ProcessEnv); }

Result<bool> ReadBlockingCommMode() { return ParseBlockingCommMode(ProcessEnv); }

}  // namespace nccl_k8s
