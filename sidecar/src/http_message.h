// The HTTP/1.1 messages of the sidecar's two servers, and the pure parts of speaking it: reading
// a request head out of received bytes and writing a response. No sockets here (http_server.*).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace sidecar {

struct RequestHead {
  std::string method;
  std::string path;   // the target up to '?', as sent
  std::string query;  // after '?', as sent
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  size_t content_length = 0;
  bool keep_alive = true;        // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only if asked
  bool expect_continue = false;  // "Expect: 100-continue": the client waits before the body

  // The first value of a header (name in any case), or "".
  std::string Header(std::string_view name) const;
  // The first value of a query parameter, percent-decoded; nullopt when absent.
  std::optional<std::string> Param(std::string_view name) const;
};

struct HttpRequest {
  RequestHead head;
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;  // omitted when empty
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // more headers, e.g. Allow
};

struct HeadIncomplete {};
struct ParsedHead {
  RequestHead head;
  size_t size = 0;  // bytes of the head, blank line included; the body starts there
};
struct HeadError {
  int status = 400;  // 400, 431, 501 or 505
  std::string message;
};

// Reads the request head at the start of `received` once it is complete. A head longer than
// `max_head_bytes` is refused (431) as soon as that many bytes arrived without its end, so a
// client cannot make the server buffer without bound. Bodies only by Content-Length: a
// chunked request body is refused (501).
std::variant<HeadIncomplete, ParsedHead, HeadError> ParseRequestHead(std::string_view received,
                                                                      size_t max_head_bytes);

// The bytes of a complete response; "Connection: close" when `close` (the server closes after it).
std::string SerializeResponse(const HttpResponse& response, bool close);

std::string_view ReasonPhrase(int status);

}  // namespace sidecar
