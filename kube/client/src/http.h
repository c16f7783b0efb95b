// One HTTP exchange over libcurl with the cluster's TLS and credentials; the Client builds
// calls and retries on top. Internal to ncclop_kube.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/status.h"
#include "tls_server_name.h"

namespace kube::internal {

struct HttpRequest {
  std::string_view method;
  std::string url;
  std::string_view body;
  std::string_view content_type;
  bool streaming = false;  // watch: no overall timeout, low-speed limit instead
  std::chrono::seconds low_speed_time{0};
  // Streaming only: receives body bytes of a 2xx answer; returning false aborts.
  std::function<bool(std::string_view)> on_data;
  std::stop_token stop;
  // Non-streaming: overall limit of this exchange (0 = ClientOptions::request_timeout).
  std::chrono::milliseconds timeout{0};
};

struct HttpResult {
  Status transport;  // !ok(): no HTTP answer (or aborted: reason "Cancelled")
  long code = 0;
  std::string body;  // whole body, or the error body of a non-2xx streaming answer
  std::string content_type;
  int retry_after_seconds = 0;
  std::vector<std::string> warnings;  // the texts of the answer's Warning headers (kube/warning.h)
};

class HttpTransport {
 public:
  HttpTransport(const Config& config, const ClientOptions& options);
  ~HttpTransport();
  HttpResult Perform(const HttpRequest& request);
  // Forces the next request to re-read the token file (after a 401).
  void InvalidateToken();

 private:
  struct Lists;
  // The steps of one exchange; handles are CURL*, kept opaque so that this header needs no
  // curl header.
  void SetTarget(void* curl, const HttpRequest& request, Lists* lists);
  void SetTransfer(void* curl, const HttpRequest& request, void* transfer);
  void SetTls(void* curl);
  void SetHeadersAndMethod(void* curl, const HttpRequest& request, Lists* lists);
  void ReadOutcome(void* curl, int curl_code, const char* error_buffer, const HttpRequest& request,
                   const void* transfer, HttpResult* result);
  void* AcquireHandle();
  void ReleaseHandle(void* handle);
  std::string BearerToken();

  Config config_;
  ClientOptions options_;
  bool tls_is_mbedtls_ = false;
  std::optional<TlsNameRoute> tls_route_;  // set when the certificate is checked for another name
  std::mutex pool_mu_;
  std::vector<void*> pool_;  // idle CURL* handles; each keeps its own alive connections
  std::mutex token_mu_;
  std::string token_;                                  // guarded by token_mu_
  std::chrono::steady_clock::time_point token_read_;  // guarded by token_mu_
  bool token_loaded_ = false;                          // guarded by token_mu_
};

}  // namespace kube::internal
