#include "flat_json.h"

#include <charconv>

namespace nccl_k8s {
namespace {

void SkipSpace(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
}

// Returns the text right after `"key":` at the top level of the object, or nullopt.
std::optional<std::string_view> ValueAfterKey(std::string_view json, std::string_view key) {
  int depth = 0;
  bool expecting_key = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '{' || c == '[') {
      ++depth;
      expecting_key = (c == '{' && depth == 1);
      continue;
    }
    if (c == '}' || c == ']') { --depth; continue; }
    if (c == ',' && depth == 1) { expecting_key = true; continue; }
    if (c != '"') continue;
    size_t end = i + 1;
    while (end < json.size() && json[end] != '"') end += (json[end] == '\\') ? 2 : 1;
    if (end >= json.size()) return std::nullopt;
    std::string_view token = json.substr(i + 1, end - i - 1);
    i = end;
    if (!(depth == 1 && expecting_key)) continue;
    expecting_key = false;
    std::string_view rest = json.substr(end + 1);
    SkipSpace(rest);
    if (rest.empty() || rest.front() != ':') return std::nullopt;
    rest.remove_prefix(1);
    SkipSpace(rest);
    if (token == key) return rest;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> JsonStringField(std::string_view json, std::string_view key) {
  auto value = ValueAfterKey(json, key);
  if (!value || value->empty() || value->front() != '"') return std::nullopt;
  size_t end = value->find('"', 1);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view text = value->substr(1, end - 1);
  if (text.find('\\') != std::string_view::npos) return std::nullopt;
  return std::string(text);
}

std::optional<int64_t> JsonIntField(std::string_view json, std::string_view key) {
  auto value = ValueAfterKey(json, key);
  if (!value) return std::nullopt;
  int64_t out = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), out);
  if (ec != std::errc()) return std::nullopt;
  return out;
}

std::optional<std::vector<std::string>> JsonStringArrayField(std::string_view json, std::string_view key) {
  auto value = ValueAfterKey(json, key);
  if (!value || value->empty() || value->front() != '[') return std::nullopt;
  std::string_view rest = value->substr(1);
  std::vector<std::string> out;
  SkipSpace(rest);
  if (!rest.empty() && rest.front() == ']') return out;
  for (;;) {
    SkipSpace(rest);
    if (rest.empty() || rest.front() != '"') return std::nullopt;
    size_t end = rest.find('"', 1);
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view text = rest.substr(1, end - 1);
    if (text.find('\\') != std::string_view::npos) return std::nullopt;
    out.emplace_back(text);
    rest.remove_prefix(end + 1);
    SkipSpace(rest);
    if (rest.empty()) return std::nullopt;
    if (rest.front() == ']') return out;
    if (rest.front() != ',') return std::nullopt;
    rest.remove_prefix(1);
  }
}

}  // namespace nccl_k8s
