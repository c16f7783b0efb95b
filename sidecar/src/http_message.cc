#include "http_message.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace sidecar {
namespace {

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

// Lines end in CRLF; a bare LF is accepted too (RFC 9112 2.2).
std::string_view CutLine(std::string_view* rest) {
  size_t lf = rest->find('\n');
  std::string_view line = rest->substr(0, lf);
  rest->remove_prefix(lf == std::string_view::npos ? rest->size() : lf + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool IsToken(std::string_view text) {
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  });
}

std::optional<HeadError> ParseRequestLine(std::string_view line, RequestHead* head, bool* http10) {
  size_t first = line.find(' ');
  size_t last = line.rfind(' ');
  if (first == std::string_view::npos || first == last) {
    return HeadError{400, "the request line is not METHOD TARGET HTTP/1.1"};
  }
  std::string_view method = line.substr(0, first);
  std::string_view target = line.substr(first + 1, last - first - 1);
  std::string_view version = line.substr(last + 1);
  if (!IsToken(method) || target.empty() || target.find(' ') != std::string_view::npos) {
    return HeadError{400, "the request line is not METHOD TARGET HTTP/1.1"};
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return HeadError{505, "only HTTP/1.1 and HTTP/1.0 are served"};
  }
  *http10 = version == "HTTP/1.0";
  head->method = std::string(method);
  size_t question = target.find('?');
  head->path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) head->query = std::string(target.substr(question + 1));
  return std::nullopt;
}

std::optional<HeadError> ApplyHeader(const std::string& name, std::string_view value, RequestHead* head,
                                     bool* seen_length) {
  if (name == "content-length") {
    size_t length = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      return HeadError{400, "Content-Length is not a number"};
    }
    if (*seen_length && length != head->content_length) return HeadError{400, "two different Content-Lengths"};
    *seen_length = true;
    head->content_length = length;
  } else if (name == "transfer-encoding") {
    return HeadError{501, "chunked request bodies are not served; send Content-Length"};
  }
  return std::nullopt;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && HexDigit(text[i + 1]) >= 0 && HexDigit(text[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(text[i + 1]) * 16 + HexDigit(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string RequestHead::Header(std::string_view name) const {
  std::string lower = Lower(name);
  for (const auto& [key, value] : headers) {
    if (key == lower) return value;
  }
  return {};
}

std::optional<std::string> RequestHead::Param(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest.remove_prefix(amp == std::string_view::npos ? rest.size() : amp + 1);
    size_t eq = pair.find('=');
    if (PercentDecode(pair.substr(0, eq)) != name) continue;
    return eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1));
  }
  return std::nullopt;
}

std::variant<HeadIncomplete, ParsedHead, HeadError> ParseRequestHead(std::string_view received,
                                                                      size_t max_head_bytes) {
  // Empty lines before a request are skipped (RFC 9112 2.2), within the same byte budget.
  size_t skipped = 0;
  while (skipped < received.size() && (received[skipped] == '\r' || received[skipped] == '\n')) ++skipped;
  std::string_view text = received.substr(skipped);
  size_t end = text.find("\n\r\n");
  size_t end_size = 3;
  if (size_t bare = text.find("\n\n"); bare != std::string_view::npos && (end == std::string_view::npos || bare < end)) {
    end = bare;
    end_size = 2;
  }
  if (end == std::string_view::npos) {
    if (received.size() >= max_head_bytes) return HeadError{431, "request head over " + std::to_string(max_head_bytes) + " bytes"};
    return HeadIncomplete{};
  }
  size_t head_size = skipped + end + end_size;
  if (head_size > max_head_bytes) return HeadError{431, "request head over " + std::to_string(max_head_bytes) + " bytes"};

  std::string_view rest = text.substr(0, end + 1);
  ParsedHead parsed;
  parsed.size = head_size;
  RequestHead& head = parsed.head;
  bool http10 = false;
  if (auto error = ParseRequestLine(CutLine(&rest), &head, &http10)) return *error;
  bool seen_length = false;
  while (!rest.empty()) {
    std::string_view line = CutLine(&rest);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 || !IsToken(line.substr(0, colon))) {
      return HeadError{400, "a header line is not NAME: VALUE"};
    }
    std::string name = Lower(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (auto error = ApplyHeader(name, value, &head, &seen_length)) return *error;
    head.headers.emplace_back(std::move(name), std::string(value));
  }
  std::string connection = Lower(head.Header("connection"));
  head.keep_alive = http10 ? connection.find("keep-alive") != std::string::npos
                           : connection.find("close") == std::string::npos;
  head.expect_continue = Lower(head.Header("expect")) == "100-continue";
  return parsed;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string SerializeResponse(const HttpResponse& response, bool close) {
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " + std::string(ReasonPhrase(response.status)) + "\r\n";
  // A 204 has no body and must not declare one (RFC 9110 8.6).
  if (response.status != 204) {
    if (!response.content_type.empty()) out += "Content-Type: " + response.content_type + "\r\n";
    out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  }
  for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  if (response.status != 204) out += response.body;
  return out;
}

}  // namespace sidecar
