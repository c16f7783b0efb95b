// Where the API server is and how to authenticate to it: from a kubeconfig file (the YAML
// kubectl writes; a JSON kubeconfig works too) or from the in-cluster service account.
// Errors name the file and the field so the user knows what to fix.
#pragma once

#include <string>
#include <string_view>

#include "kube/status.h"

namespace kube {

struct Config {
  std::string server;  // "https://host:port" (IPv6 hosts in brackets)

  // Certificate authority: a PEM file, or PEM bytes (already base64-decoded).
  std::string ca_file;
  std::string ca_data;
  // Client certificate and key: files, or PEM bytes.
  std::string client_cert_file;
  std::string client_cert_data;
  std::string client_key_file;
  std::string client_key_data;
  // Bearer token: fixed, or read from a file. A token file is re-read at least every minute
  // (service-account tokens are rotated by the kubelet).
  std::string token;
  std::string token_file;

  bool insecure_skip_tls_verify = false;  // only when LoadOptions::allow_insecure
  std::string tls_server_name;            // overrides the name checked in the server cert

  std::string default_namespace = "default";  // context namespace or the service account's
  std::string source;                         // "kubeconfig /path (context x)" or "in-cluster"
};

struct LoadOptions {
  std::string context;          // empty: the kubeconfig's current-context
  bool allow_insecure = false;  // accept insecure-skip-tls-verify: true
};

// Parses kubeconfig text. `path` is used in error messages; relative file paths inside
// the kubeconfig resolve against the directory of `path` (as kubectl does).
Result<Config> ParseKubeconfig(std::string_view text, const std::string& path,
                               const LoadOptions& options = {});
Result<Config> LoadKubeconfigFile(const std::string& path, const LoadOptions& options = {});

// In-cluster: KUBERNETES_SERVICE_HOST/PORT and the service-account directory
// (token, ca.crt, namespace).
constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
Result<Config> LoadInCluster();
// The same with explicit inputs (tests, or unusual mounts).
Result<Config> LoadInClusterFrom(std::string_view host, std::string_view port,
                                 const std::string& service_account_dir);

// The usual order: the flag if non-empty, else $KUBECONFIG (first existing entry of the
// colon-separated list), else in-cluster when KUBERNETES_SERVICE_HOST is set,
// else ~/.kube/config.
Result<Config> Load(const std::string& kubeconfig_flag, const LoadOptions& options = {});

}  // namespace kube
