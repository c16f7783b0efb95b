// Command-line flags of nccl-operator (kept apart from main so they are unit tested). Each flag
// is one row of CommandLine() in flags.cc; its default is the initialiser of its field here (or
// in desired::PodOptions), and --help and operator/REFERENCE.md's table are made from the rows.
#pragma once

#include <string>
#include <vector>

#include "cli/program.h"
#include "desired/pod.h"
#include "kube/status.h"
#include "logging/log.h"

namespace ncclop {

struct Flags {
  std::string kubeconfig;
  std::string namespace_;  // "" = all namespaces
  bool leader_elect = false;
  std::string leader_election_namespace;  // "" = $POD_NAMESPACE, else --namespace, else the kubeconfig's
  std::string leader_election_id = "nccl-operator-leader";
  std::string metrics_bind_address = ":8080";  // "0" disables
  bool metrics_secure = false;  // HTTPS, callers authenticated and authorized by the API server
  std::string metrics_cert_dir;  // tls.crt and tls.key; "" = a self-signed certificate made at start
  std::string health_probe_bind_address = ":8081";
  desired::PodOptions pod;  // --sidecar-*, --gpu-resource-name
  logging::Format log_format = logging::Format::kText;
  logging::Level log_level = logging::Level::kInfo;
  int concurrency = 4;
  int gang_api_recheck_seconds = 60;
  int status_counts_interval_seconds = 1;
  std::string check_url;  // not empty: GET it and exit instead of running the operator
  bool help = false;
  bool version = false;
};

// The flag table; its rows write into *flags.
cli::Program CommandLine(Flags* flags);

kube::Result<Flags> ParseFlags(const std::vector<std::string>& args);
std::string HelpText();
std::string VersionText();

}  // namespace ncclop
