#include "kube/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "contract/unique_id.h"
#include "read_file.h"
#include "yaml_subset.h"

namespace kube {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using internal::ReadFile;

// kubeconfig *-data fields are standard base64 that tools sometimes wrap or leave unpadded:
// folded to the one strict form (contract/unique_id.h) before decoding.
std::optional<std::string> DecodeKubeconfigData(std::string_view value) {
  std::string text;
  for (char c : value) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') text += c;
  }
  while (!text.empty() && text.back() == '=') text.pop_back();
  if (text.size() % 4 == 1) return std::nullopt;  // a lone 6-bit leftover is not base64
  // Bits past the last whole byte are dropped, not refused: a kubeconfig is lenient input, the id is not.
  if (const std::size_t tail = text.size() % 4; tail != 0) {
    const auto last = contract::base64_internal::kReverse[static_cast<unsigned char>(text.back())];
    if (last == contract::base64_internal::kInvalid) return std::nullopt;
    text.back() = contract::base64_internal::kAlphabet[last & (tail == 2 ? 0x30 : 0x3c)];
  }
  text.append((4 - text.size() % 4) % 4, '=');
  return contract::Base64Decode(text);
}

Status ConfigError(const std::string& where, const std::string& what) {
  return Status::Local("InvalidConfig", where + ": " + what);
}

// Finds {"name": name, <field>: {...}} in a named list such as clusters or users.
const json* FindNamed(const json& root, const char* list, const char* field, const std::string& name) {
  auto it = root.find(list);
  if (it == root.end() || !it->is_array()) return nullptr;
  for (const auto& entry : *it) {
    if (!entry.is_object()) continue;
    auto n = entry.find("name");
    if (n == entry.end() || !n->is_string() || *n != name) continue;
    auto f = entry.find(field);
    if (f == entry.end() || f->is_null()) {
      static const json kEmpty = json::object();
      return &kEmpty;
    }
    return f->is_object() ? &*f : nullptr;
  }
  return nullptr;
}

class Reader {
 public:
  Reader(std::string file, std::string base_dir) : file_(std::move(file)), base_dir_(std::move(base_dir)) {}

  // A string field; empty when absent. Anything but a string is an error.
  bool String(const json& obj, const std::string& path, const char* key, std::string* out, Status* err) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return true;
    if (!it->is_string()) {
      *err = ConfigError(Where(path + "." + key), "must be a string");
      return false;
    }
    *out = it->get<std::string>();
    return true;
  }

  // A path field that must name a readable file (resolved against the kubeconfig's directory).
  bool File(const json& obj, const std::string& path, const char* key, std::string* out, Status* err) {
    std::string value;
    if (!String(obj, path, key, &value, err)) return false;
    if (value.empty()) return true;
    fs::path p(value);
    if (p.is_relative() && !base_dir_.empty()) p = fs::path(base_dir_) / p;
    std::ifstream probe(p);
    if (!probe) {
      *err = ConfigError(Where(path + "." + key),
                         "cannot read file " + p.string() + " (fix the path or the permissions)");
      return false;
    }
    *out = p.string();
    return true;
  }

  // A base64 field (*-data), decoded.
  bool Data(const json& obj, const std::string& path, const char* key, std::string* out, Status* err) {
    std::string value;
    if (!String(obj, path, key, &value, err)) return false;
    if (value.empty()) return true;
    std::optional<std::string> decoded = DecodeKubeconfigData(value);
    if (!decoded) {
      *err = ConfigError(Where(path + "." + key), "is not valid base64");
      return false;
    }
    *out = std::move(*decoded);
    return true;
  }

  std::string Where(const std::string& field) const { return "kubeconfig " + file_ + ": " + field; }

 private:
  std::string file_;
  std::string base_dir_;
};

bool IsPortNumber(std::string_view text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string_view::npos) return false;
  const int port = std::stoi(std::string(text));
  return port >= 1 && port <= 65535;
}

}  // namespace

Result<Config> ParseKubeconfig(std::string_view text, const std::string& path, const LoadOptions& options) {
  json root;
  std::string parse_error;
  if (!internal::ParseYamlSubset(text, &root, &parse_error)) {
    return ConfigError("kubeconfig " + path, parse_error);
  }
  if (!root.is_object()) return ConfigError("kubeconfig " + path, "is not a mapping");
  std::string base_dir = fs::path(path).parent_path().string();
  Reader r(path, base_dir);
  Status err;

  std::string context_name = options.context;
  if (context_name.empty() && !r.String(root, "", "current-context", &context_name, &err)) return err;
  if (context_name.empty()) {
    return ConfigError(r.Where("current-context"), "is not set (pass a context name or run "
                                                   "`kubectl config use-context`)");
  }
  const json* context = FindNamed(root, "contexts", "context", context_name);
  const std::string ctx_path = "contexts[" + context_name + "].context";
  if (context == nullptr) return ConfigError(r.Where("contexts"), "has no context named \"" + context_name + "\"");

  Config c;
  std::string cluster_name, user_name, ns;
  if (!r.String(*context, ctx_path, "cluster", &cluster_name, &err) ||
      !r.String(*context, ctx_path, "user", &user_name, &err) ||
      !r.String(*context, ctx_path, "namespace", &ns, &err)) {
    return err;
  }
  if (!ns.empty()) c.default_namespace = ns;
  if (cluster_name.empty()) return ConfigError(r.Where(ctx_path + ".cluster"), "is missing");

  const json* cluster = FindNamed(root, "clusters", "cluster", cluster_name);
  const std::string cl_path = "clusters[" + cluster_name + "].cluster";
  if (cluster == nullptr) return ConfigError(r.Where("clusters"), "has no cluster named \"" + cluster_name + "\"");
  if (!r.String(*cluster, cl_path, "server", &c.server, &err) ||
      !r.File(*cluster, cl_path, "certificate-authority", &c.ca_file, &err) ||
      !r.Data(*cluster, cl_path, "certificate-authority-data", &c.ca_data, &err) ||
      !r.String(*cluster, cl_path, "tls-server-name", &c.tls_server_name, &err)) {
    return err;
  }
  if (c.server.empty()) return ConfigError(r.Where(cl_path + ".server"), "is missing");
  if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0) {
    return ConfigError(r.Where(cl_path + ".server"), "must start with https:// (got \"" + c.server + "\")");
  }
  if (auto it = cluster->find("insecure-skip-tls-verify"); it != cluster->end() && !it->is_null()) {
    const bool insecure = it->is_boolean() ? it->get<bool>() : (it->is_string() && *it == "true");
    if (!it->is_boolean() && !it->is_string()) {
      return ConfigError(r.Where(cl_path + ".insecure-skip-tls-verify"), "must be true or false");
    }
    if (insecure && !options.allow_insecure) {
      return ConfigError(r.Where(cl_path + ".insecure-skip-tls-verify"),
                         "is true, which disables server certificate checks; set certificate-authority "
                         "instead (or allow insecure connections explicitly)");
    }
    c.insecure_skip_tls_verify = insecure;
  }

  if (!user_name.empty()) {
    const json* user = FindNamed(root, "users", "user", user_name);
    const std::string u_path = "users[" + user_name + "].user";
    if (user == nullptr) return ConfigError(r.Where("users"), "has no user named \"" + user_name + "\"");
    for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
      if (user->contains(unsupported) && !(*user)[unsupported].is_null()) {
        return ConfigError(r.Where(u_path + "." + unsupported),
                           "is not supported by this client (use a token or a client certificate)");
      }
    }
    if (!r.String(*user, u_path, "token", &c.token, &err) ||
        !r.File(*user, u_path, "tokenFile", &c.token_file, &err) ||
        !r.File(*user, u_path, "client-certificate", &c.client_cert_file, &err) ||
        !r.Data(*user, u_path, "client-certificate-data", &c.client_cert_data, &err) ||
        !r.File(*user, u_path, "client-key", &c.client_key_file, &err) ||
        !r.Data(*user, u_path, "client-key-data", &c.client_key_data, &err)) {
      return err;
    }
    const bool has_cert = !c.client_cert_file.empty() || !c.client_cert_data.empty();
    const bool has_key = !c.client_key_file.empty() || !c.client_key_data.empty();
    if (has_cert != has_key) {
      return ConfigError(r.Where(u_path + (has_cert ? ".client-key" : ".client-certificate")),
                         "is missing (a client certificate needs its key and the other way round)");
    }
  }
  c.source = "kubeconfig " + path + " (context " + context_name + ")";
  return c;
}

Result<Config> LoadKubeconfigFile(const std::string& path, const LoadOptions& options) {
  std::string text;
  if (!ReadFile(path, &text)) {
    return ConfigError("kubeconfig " + path, "cannot be read (check the path given by --kubeconfig or KUBECONFIG)");
  }
  return ParseKubeconfig(text, path, options);
}

Result<Config> LoadInClusterFrom(std::string_view host, std::string_view port, const std::string& sa_dir) {
  if (host.empty() || port.empty()) {
    return Status::Local("InvalidConfig",
                         "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set");
  }
  // The env is the kubelet's, but anything can be put in a pod's env: a value that is not a
  // port or a host would otherwise surface later as a puzzling connection error.
  if (!IsPortNumber(port)) {
    return Status::Local("InvalidConfig", "in-cluster: KUBERNETES_SERVICE_PORT must be a port number 1-65535, got \"" +
                                              std::string(port) + "\"");
  }
  if (host.find_first_of("/?#@ \t\r\n") != std::string_view::npos) {
    return Status::Local("InvalidConfig", "in-cluster: KUBERNETES_SERVICE_HOST must be a host name or IP address, got \"" +
                                              std::string(host) + "\"");
  }
  Config c;
  std::string h(host);
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";  // IPv6 literal
  c.server = "https://" + h + ":" + std::string(port);
  const std::string token = sa_dir + "/token";
  const std::string ca = sa_dir + "/ca.crt";
  std::string probe;
  if (!ReadFile(token, &probe)) {
    return Status::Local("InvalidConfig", "in-cluster: cannot read service-account token " + token +
                                              " (is automountServiceAccountToken off?)");
  }
  if (!ReadFile(ca, &probe)) {
    return Status::Local("InvalidConfig", "in-cluster: cannot read cluster CA " + ca);
  }
  c.token_file = token;
  c.ca_file = ca;
  std::string ns;
  if (ReadFile(sa_dir + "/namespace", &ns)) {
    while (!ns.empty() && (ns.back() == '\n' || ns.back() == ' ' || ns.back() == '\r')) ns.pop_back();
    if (!ns.empty()) c.default_namespace = ns;
  }
  c.source = "in-cluster";
  return c;
}

Result<Config> LoadInCluster() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  return LoadInClusterFrom(host ? host : "", port ? port : "", kServiceAccountDir);
}

Result<Config> Load(const std::string& kubeconfig_flag, const LoadOptions& options) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfigFile(kubeconfig_flag, options);
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::string list(env);
    std::size_t start = 0;
    std::string first;
    while (start <= list.size()) {
      std::size_t colon = list.find(':', start);
      std::string entry = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!entry.empty()) {
        if (first.empty()) first = entry;
        if (fs::exists(entry)) return LoadKubeconfigFile(entry, options);
      }
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (!first.empty()) return LoadKubeconfigFile(first, options);  // reports the missing file
  }
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST"); host != nullptr && *host != '\0') {
    return LoadInCluster();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    std::string path = std::string(home) + "/.kube/config";
    if (fs::exists(path)) return LoadKubeconfigFile(path, options);
  }
  return Status::Local("InvalidConfig",
                       "no Kubernetes configuration found: pass --kubeconfig, set KUBECONFIG, run in a "
                       "pod with a service account, or create ~/.kube/config");
}

}  // namespace kube
