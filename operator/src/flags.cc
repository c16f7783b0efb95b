#include "flags.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <regex>

namespace ncclop {
namespace {

kube::Status Bad(const std::string& message) {
  return kube::Status::Local("InvalidFlag", message + " (see nccl-operator --help)");
}

// A Kubernetes resource quantity (100m, 64Mi, 0.5, 1e3); "" = unset.
bool IsQuantity(const std::string& value) {
  static const std::regex kQuantity(R"(^([0-9]+(\.[0-9]*)?|\.[0-9]+)([numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]+)?$)");
  return value.empty() || std::regex_match(value, kQuantity);
}

// The field a --sidecar-<resource>-<request|limit> flag sets; nullptr for any other flag.
std::string* SidecarQuantity(const std::string& flag, desired::SidecarResources* r) {
  if (flag == "sidecar-cpu-request") return &r->cpu_request;
  if (flag == "sidecar-memory-request") return &r->memory_request;
  if (flag == "sidecar-ephemeral-storage-request") return &r->ephemeral_storage_request;
  if (flag == "sidecar-cpu-limit") return &r->cpu_limit;
  if (flag == "sidecar-memory-limit") return &r->memory_limit;
  if (flag == "sidecar-ephemeral-storage-limit") return &r->ephemeral_storage_limit;
  return nullptr;
}

}  // namespace

std::string HelpText() {
  return R"(nccl-operator: runs NcclJobs (nccl.dev/v1alpha1), multi-pod NCCL jobs that share one
ncclUniqueId per attempt and restart together.

Usage: nccl-operator [flags]

  --kubeconfig=PATH                  kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)
  --namespace=NS                     watch one namespace (default: all namespaces)
  --leader-elect                     hold a coordination.k8s.io Lease before acting (run 2+ replicas)
  --leader-election-namespace=NS     the Lease's namespace (default: $POD_NAMESPACE, --namespace,
                                     or the kubeconfig's namespace)
  --leader-election-id=NAME          the Lease's name (default nccl-operator-leader)
  --metrics-bind-address=ADDR        Prometheus /metrics on host:port or :port; 0 disables (default :8080)
  --health-probe-bind-address=ADDR   /healthz and /readyz (default :8081); 0 disables
  --sidecar-image=IMAGE              image of the injected nccl-sidecar (default nccl-sidecar:0.1.0)
  --sidecar-image-pull-policy=P      Always (default), IfNotPresent, Never, or empty: the API
                                     server's default for the image's tag
  --sidecar-cpu-request=Q            the sidecar's resources, Kubernetes quantities; an empty value
  --sidecar-memory-request=Q         leaves one unset. Defaults: requests 10m, 32Mi, 16Mi; limits
  --sidecar-ephemeral-storage-request=Q   500m, 64Mi, 128Mi (limits make the pods fit a
  --sidecar-cpu-limit=Q              ResourceQuota that demands them)
  --sidecar-memory-limit=Q
  --sidecar-ephemeral-storage-limit=Q
  --log-format=text|json             (default text)
  --log-level=debug|info|warn|error  (default info)
  --concurrency=N                    jobs reconciled in parallel, 1..64 (default 4)
  -h, --help                         this text

SIGTERM or SIGINT: stop workers, release the Lease, exit 0.
)";
}

kube::Result<Flags> ParseFlags(const std::vector<std::string>& args) {
  Flags f;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "-h" || arg == "--help") {
      f.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) return Bad("unexpected argument \"" + arg + "\"");
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "leader-elect") {
      if (has_value && value != "true" && value != "false") return Bad("--leader-elect takes true or false");
      f.leader_elect = !has_value || value == "true";
      continue;
    }
    static const char* const kValueFlags[] = {"kubeconfig", "namespace", "leader-election-namespace",
                                              "leader-election-id", "metrics-bind-address",
                                              "health-probe-bind-address", "sidecar-image", "log-format",
                                              "log-level", "concurrency", "sidecar-image-pull-policy",
                                              "sidecar-cpu-request", "sidecar-memory-request",
                                              "sidecar-ephemeral-storage-request", "sidecar-cpu-limit",
                                              "sidecar-memory-limit", "sidecar-ephemeral-storage-limit"};
    if (std::find(std::begin(kValueFlags), std::end(kValueFlags), name) == std::end(kValueFlags)) {
      return Bad("unknown flag --" + name);
    }
    if (!has_value) {
      if (i + 1 >= args.size()) return Bad("--" + name + " needs a value");
      value = args[++i];
    }
    if (name == "kubeconfig") {
      f.kubeconfig = value;
    } else if (name == "namespace") {
      f.namespace_ = value;
    } else if (name == "leader-election-namespace") {
      f.leader_election_namespace = value;
    } else if (name == "leader-election-id") {
      f.leader_election_id = value;
    } else if (name == "metrics-bind-address") {
      f.metrics_bind_address = value;
    } else if (name == "health-probe-bind-address") {
      f.health_probe_bind_address = value;
    } else if (name == "sidecar-image") {
      if (value.empty()) return Bad("--sidecar-image must not be empty");
      f.pod.sidecar_image = value;
    } else if (name == "sidecar-image-pull-policy") {
      if (!value.empty() && value != "Always" && value != "IfNotPresent" && value != "Never") {
        return Bad("--sidecar-image-pull-policy must be Always, IfNotPresent, Never or empty, got \"" + value + "\"");
      }
      f.pod.sidecar_image_pull_policy = value;
    } else if (std::string* quantity = SidecarQuantity(name, &f.pod.sidecar_resources)) {
      if (!IsQuantity(value)) {
        return Bad("--" + name + " must be a Kubernetes quantity like 100m or 64Mi (or empty), got \"" + value + "\"");
      }
      *quantity = value;
    } else if (name == "log-format") {
      if (!logging::ParseFormat(value, &f.log_format)) return Bad("--log-format must be text or json, got \"" + value + "\"");
    } else if (name == "log-level") {
      if (!logging::ParseLevel(value, &f.log_level)) {
        return Bad("--log-level must be debug, info, warn or error, got \"" + value + "\"");
      }
    } else if (name == "concurrency") {
      int n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > 64) {
        return Bad("--concurrency must be a number from 1 to 64, got \"" + value + "\"");
      }
      f.concurrency = n;
    } else {
      return Bad("unknown flag --" + name);
    }
  }
  return f;
}

}  // namespace ncclop
