// What the runtime reads from its sidecar: a raw HTTP/1.1 response (status line, headers,
// Content-Length or chunked body), the flat JSON in it, and the sidecar URL. Properties: a parsed
// body is never longer than the bytes received; a flat-JSON string field, or string of an array
// field, contains no quote or backslash (escapes are refused, never guessed).
#include <cstdlib>
#include <string>

#include "fuzz_input.h"
#include "flat_json.h"
#include "http_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const std::string url = in.ConsumeRandomLengthString(64);
  const std::string key = in.ConsumeRandomLengthString(8);
  const std::string raw = in.ConsumeRemainingBytesAsString();

  if (auto parsed = nccl_k8s::ParseHttpUrl(url); parsed.ok()) {
    if (parsed->port < 1 || parsed->port > 65535 || parsed->host.empty()) std::abort();
  }
  auto response = nccl_k8s::ParseHttpResponse(raw);
  if (response.ok()) {
    if (response->body.size() > raw.size()) std::abort();
    if (response->status < 100 || response->status > 599) std::abort();
  }
  for (std::string_view body : {std::string_view(raw), response.ok() ? std::string_view(response->body) : ""}) {
    for (std::string_view k : {std::string_view("id"), std::string_view("attempt"), std::string_view(key)}) {
      if (auto s = nccl_k8s::JsonStringField(body, k); s && s->find_first_of("\"\\") != std::string::npos) std::abort();
      (void)nccl_k8s::JsonIntField(body, k);
      if (auto list = nccl_k8s::JsonStringArrayField(body, k)) {
        for (const std::string& item : *list) {
          if (item.find_first_of("\"\\") != std::string::npos) std::abort();
        }
      }
    }
  }
  return 0;
}
