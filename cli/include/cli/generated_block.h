// The part of a Markdown file that is generated from the code (a flag table), between
//   <!-- begin generated NAME: anything, e.g. where it comes from -->
//   <!-- end generated NAME -->
// so a test can compare it with what the code makes, and rewrite it. Pure: no file access.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cli {

// The text between the two marker lines (both excluded); nullopt when either is missing.
std::optional<std::string> GeneratedBlock(std::string_view doc, std::string_view name);

// `doc` with that text replaced by `text`; nullopt when a marker is missing.
std::optional<std::string> ReplaceGeneratedBlock(std::string_view doc, std::string_view name, std::string_view text);

}  // namespace cli
