// The sidecar's HTTP request-head parser on any bytes, as its server calls it on a buffer that
// grows with each read. Properties: a head that parses from the whole buffer parses the same
// from exactly its own bytes; every shorter prefix of it is "incomplete" (the server keeps
// reading instead of answering 400 to a request that arrived in pieces); a head never claims
// more bytes than it was given; query parameters decode without crashing.
#include <cstdlib>
#include <string>

#include "fuzz_input.h"
#include "http_message.h"

namespace {

bool SameHead(const sidecar::RequestHead& a, const sidecar::RequestHead& b) {
  return a.method == b.method && a.path == b.path && a.query == b.query && a.headers == b.headers &&
         a.content_length == b.content_length && a.keep_alive == b.keep_alive &&
         a.expect_continue == b.expect_continue;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const size_t max_head = in.ConsumeIntegralInRange<size_t>(16, 8192);
  const std::string received = in.ConsumeRemainingBytesAsString();
  auto whole = sidecar::ParseRequestHead(received, max_head);
  auto* parsed = std::get_if<sidecar::ParsedHead>(&whole);
  if (parsed == nullptr) return 0;
  if (parsed->size == 0 || parsed->size > received.size()) std::abort();
  auto exact = sidecar::ParseRequestHead(std::string_view(received).substr(0, parsed->size), max_head);
  auto* again = std::get_if<sidecar::ParsedHead>(&exact);
  if (again == nullptr || again->size != parsed->size || !SameHead(again->head, parsed->head)) std::abort();
  for (size_t n = 0; n < parsed->size; n += 1 + n / 8) {
    auto part = sidecar::ParseRequestHead(std::string_view(received).substr(0, n), max_head);
    if (!std::holds_alternative<sidecar::HeadIncomplete>(part)) std::abort();
  }
  (void)parsed->head.Param("timeout");
  (void)parsed->head.Header("content-type");
  sidecar::HttpResponse response;
  response.body = parsed->head.path;
  (void)sidecar::SerializeResponse(response, !parsed->head.keep_alive);
  return 0;
}
