#include "cli/generated_block.h"

#include <cctype>

namespace cli {
namespace {

struct Span {
  std::size_t begin;  // the first character after the begin marker's line
  std::size_t end;    // the first character of the end marker
};

bool NamePart(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

std::optional<Span> Find(std::string_view doc, std::string_view name) {
  const std::string begin_marker = "<!-- begin generated " + std::string(name);
  const std::string end_marker = "<!-- end generated " + std::string(name) + " -->";
  std::size_t begin = doc.find(begin_marker);
  // "flags" is not the start of "flags-sidecar".
  while (begin != std::string_view::npos && begin + begin_marker.size() < doc.size() &&
         NamePart(doc[begin + begin_marker.size()])) {
    begin = doc.find(begin_marker, begin + 1);
  }
  if (begin == std::string_view::npos) return std::nullopt;
  begin = doc.find('\n', begin);
  if (begin == std::string_view::npos) return std::nullopt;
  const std::size_t end = doc.find(end_marker, begin);
  if (end == std::string_view::npos) return std::nullopt;
  return Span{begin + 1, end};
}

}  // namespace

std::optional<std::string> GeneratedBlock(std::string_view doc, std::string_view name) {
  std::optional<Span> span = Find(doc, name);
  if (!span) return std::nullopt;
  return std::string(doc.substr(span->begin, span->end - span->begin));
}

std::optional<std::string> ReplaceGeneratedBlock(std::string_view doc, std::string_view name, std::string_view text) {
  std::optional<Span> span = Find(doc, name);
  if (!span) return std::nullopt;
  return std::string(doc.substr(0, span->begin)) + std::string(text) + std::string(doc.substr(span->end));
}

}  // namespace cli
