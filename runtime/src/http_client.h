// A minimal HTTP/1.1 client for the sidecar on loopback: one request per connection
// ("Connection: close"), Content-Length or chunked bodies, one deadline for connect + send +
// receive. The runtime links into users' training images, so it carries this ~200-line client
// instead of a shared HTTP library; TLS and redirects are not needed for 127.0.0.1.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "nccl_k8s/status.h"

namespace nccl_k8s {

struct HttpUrl {
  std::string host;
  int port = 80;
  std::string base_path;  // without trailing '/', may be ""
};
Result<HttpUrl> ParseHttpUrl(std::string_view url);

struct HttpResponse {
  int status = 0;
  std::string body;
};

// Pure: parses a complete response (status line, headers, body). Used by HttpRequest and tests.
Result<HttpResponse> ParseHttpResponse(std::string_view raw);

Result<HttpResponse> HttpRequest(const HttpUrl& url, std::string_view method, std::string_view path,
                                 std::string_view content_type, std::string_view body,
                                 std::chrono::steady_clock::time_point deadline);

}  // namespace nccl_k8s
