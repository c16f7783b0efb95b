// kubeconfig text (YAML subset or JSON) as kubectl or a user writes it. Property: a parse is
// deterministic, and an accepted file names a server with a scheme.
#include <cstdlib>
#include <string>

#include "kube/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  kube::LoadOptions options;
  options.allow_insecure = (data[0] & 1) != 0;
  if (data[0] & 2) options.context = "fuzz";
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  // A path that does not exist: *-file entries resolve against it but are never read here.
  auto first = kube::ParseKubeconfig(text, "/nonexistent/fuzz/kubeconfig", options);
  auto second = kube::ParseKubeconfig(text, "/nonexistent/fuzz/kubeconfig", options);
  if (first.ok() != second.ok()) std::abort();
  if (!first.ok()) {
    if (first.status().message() != second.status().message()) std::abort();
    return 0;
  }
  if (first->server != second->server || first->token != second->token) std::abort();
  if (first->server.find("://") == std::string::npos) std::abort();
  if (first->insecure_skip_tls_verify && !options.allow_insecure) std::abort();
  return 0;
}
