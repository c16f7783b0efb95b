// The in-cluster inputs: KUBERNETES_SERVICE_HOST/PORT and the service-account files (token,
// ca.crt, namespace), each possibly missing, empty or garbage. Property: an accepted config
// names an https server built from the host and port given, with a port number in range and a host
// without URL syntax (else the error would surface later as a confusing connection failure).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_input.h"
#include "kube/config.h"

namespace {

namespace fs = std::filesystem;

const fs::path& Dir() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "ncclop-fuzz-sa-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    return fs::path(tmpl);
  }();
  return dir;
}

void WriteOrRemove(const fs::path& path, bool present, const std::string& content) {
  std::error_code ec;
  fs::remove(path, ec);
  if (!present) return;
  std::ofstream(path, std::ios::binary) << content;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const std::string host = in.ConsumeRandomLengthString(64);
  const std::string port = in.ConsumeRandomLengthString(16);
  const uint8_t present = in.ConsumeIntegral<uint8_t>();
  const std::string token = in.ConsumeRandomLengthString(256);
  const std::string ns = in.ConsumeRandomLengthString(64);
  const std::string ca = in.ConsumeRemainingBytesAsString();
  WriteOrRemove(Dir() / "token", present & 1, token);
  WriteOrRemove(Dir() / "namespace", present & 2, ns);
  WriteOrRemove(Dir() / "ca.crt", present & 4, ca);

  auto config = kube::LoadInClusterFrom(host, port, Dir().string());
  if (!config.ok()) return 0;
  if (config->server.rfind("https://", 0) != 0) std::abort();
  if (config->server.find(port) == std::string::npos) std::abort();
  if (host.find(':') == std::string::npos && config->server.find(host) == std::string::npos) std::abort();
  // A URL from these parts must mean what it says: a port number, a host without URL syntax.
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoi(port) < 1 ||
      std::stoi(port) > 65535) {
    std::abort();
  }
  if (host.find_first_of("/?#@ \t\r\n") != std::string::npos) std::abort();
  return 0;
}
