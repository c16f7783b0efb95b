#include "flags.h"

#include <regex>

#include "api/quantity.h"
#include "cli/log_flags.h"

namespace ncclop {
namespace {

// A Kubernetes resource quantity (100m, 64Mi, 0.5, 1e3); "" = unset.
bool IsQuantity(const std::string& value) { return value.empty() || api::IsQuantity(value); }

// An extended resource name as the API server takes one (its IsExtendedResourceName): a
// domain-prefixed name outside kubernetes.io, that is still a qualified name once prefixed
// with "requests." (how a ResourceQuota names it).
bool IsExtendedResourceName(const std::string& value) {
  const auto slash = value.find('/');
  if (slash == std::string::npos || value.find("kubernetes.io/") != std::string::npos || value.starts_with("requests.")) {
    return false;
  }
  static const std::regex kPrefix(R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)");
  static const std::regex kName(R"(^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$)");
  const std::string prefix = "requests." + value.substr(0, slash);
  const std::string name = value.substr(slash + 1);
  return prefix.size() <= 253 && std::regex_match(prefix, kPrefix) && name.size() <= 63 && std::regex_match(name, kName);
}

cli::Flag SidecarQuantity(std::string name, std::string* field, const std::string& what) {
  return cli::Text(std::move(name), field, "Q", "the sidecar's " + what + ", a Kubernetes quantity; empty leaves it unset")
      .Check("a Kubernetes quantity like 100m or 64Mi (or empty)", IsQuantity);
}

}  // namespace

cli::Program CommandLine(Flags* f) {
  desired::SidecarResources* r = &f->pod.sidecar_resources;
  return {
      .name = "nccl-operator",
      .summary = "nccl-operator: runs NcclJobs (nccl.dev/v1alpha1), multi-pod NCCL jobs that share one\n"
                 "ncclUniqueId per attempt and restart together.",
      .flags =
          {
              cli::Text("kubeconfig", &f->kubeconfig, "PATH", "kubeconfig file")
                  .DefaultIs("$KUBECONFIG, in-cluster, ~/.kube/config"),
              cli::Text("namespace", &f->namespace_, "NS", "watch one namespace").DefaultIs("all namespaces"),
              cli::Switch("leader-elect", &f->leader_elect,
                          "hold a coordination.k8s.io Lease before acting, to run 2 or more replicas"),
              cli::Text("leader-election-namespace", &f->leader_election_namespace, "NS", "the Lease's namespace")
                  .DefaultIs("$POD_NAMESPACE, --namespace, or the kubeconfig's namespace"),
              cli::Text("leader-election-id", &f->leader_election_id, "NAME", "the Lease's name"),
              cli::Text("metrics-bind-address", &f->metrics_bind_address, "ADDR",
                        "Prometheus /metrics on host:port or :port; 0 disables"),
              cli::Switch("metrics-secure", &f->metrics_secure,
                          "serve /metrics over HTTPS, only to callers the API server authenticates (TokenReview) "
                          "and allows to get the non-resource URL /metrics (SubjectAccessReview)"),
              cli::Text("metrics-cert-dir", &f->metrics_cert_dir, "DIR",
                        "with --metrics-secure: the directory holding tls.crt and tls.key")
                  .DefaultIs("a self-signed certificate made at start"),
              cli::Text("health-probe-bind-address", &f->health_probe_bind_address, "ADDR",
                        "/healthz and /readyz on host:port or :port; 0 disables"),
              cli::Text("sidecar-image", &f->pod.sidecar_image, "IMAGE", "image of the injected nccl-sidecar")
                  .Check("a non-empty image name", [](const std::string& v) { return !v.empty(); }),
              cli::OneOf("sidecar-image-pull-policy", &f->pod.sidecar_image_pull_policy, "P",
                         {"Always", "IfNotPresent", "Never", ""},
                         "the sidecar's imagePullPolicy; empty: the API server's default for the image's tag"),
              cli::Text("gpu-resource-name", &f->pod.gpu_resource, "NAME",
                        "the extended resource the trainer's spec.gpusPerPod GPUs are asked in (amd.com/gpu, a MIG "
                        "profile's nvidia.com/mig-1g.10gb); not set where the template claims devices (DRA) or sets it")
                  .Check("an extended resource name: domain/name outside kubernetes.io, like nvidia.com/gpu",
                         IsExtendedResourceName),
              SidecarQuantity("sidecar-cpu-request", &r->cpu_request, "CPU request"),
              SidecarQuantity("sidecar-memory-request", &r->memory_request, "memory request"),
              SidecarQuantity("sidecar-ephemeral-storage-request", &r->ephemeral_storage_request,
                              "ephemeral-storage request"),
              SidecarQuantity("sidecar-cpu-limit", &r->cpu_limit, "CPU limit"),
              SidecarQuantity("sidecar-memory-limit", &r->memory_limit, "memory limit"),
              SidecarQuantity("sidecar-ephemeral-storage-limit", &r->ephemeral_storage_limit,
                              "ephemeral-storage limit"),
              cli::LogFormatFlag(&f->log_format),
              cli::LogLevelFlag(&f->log_level),
              cli::IntInRange("concurrency", &f->concurrency, 1, 64, "jobs reconciled in parallel"),
              cli::IntInRange("gang-api-recheck-seconds", &f->gang_api_recheck_seconds, 0, 86400,
                              "how often to ask again which scheduling.k8s.io gang API is served; on a change "
                              "the operator exits 1 so that its restart follows it; 0: never"),
              cli::IntInRange("status-counts-interval-seconds", &f->status_counts_interval_seconds, 0, 60,
                              "how often at most a job's status is written when only its pod counts changed (ready, "
                              "active, succeeded, failed, and the running count in its Running condition's message); "
                              "every other change is written at once, with the counts of the moment; 0: every change "
                              "at once"),
              cli::Text("check-url", &f->check_url, "URL",
                        "GET URL (plain HTTP) once instead of running the operator, print the status code and "
                        "exit 0 on a 2xx answer, else 1; for the chart's helm test, as the image has no shell"),
          },
      .epilogue = "The sidecar's limits are set by default so its pods fit a ResourceQuota that demands limits.\n"
                  "\n"
                  "SIGTERM or SIGINT: stop workers, release the Lease, exit 0.\n",
  };
}

std::string HelpText() {
  Flags defaults;
  return cli::HelpText(CommandLine(&defaults));
}

std::string VersionText() {
  Flags defaults;
  return cli::VersionText(CommandLine(&defaults));
}

kube::Result<Flags> ParseFlags(const std::vector<std::string>& args) {
  Flags f;
  cli::ParseOutcome outcome = cli::Parse(CommandLine(&f), args);
  if (!outcome.ok()) return kube::Status::Local("InvalidFlag", outcome.error);
  f.help = outcome.help;
  f.version = outcome.version;
  return f;
}

}  // namespace ncclop
