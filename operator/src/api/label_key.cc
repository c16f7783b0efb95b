#include "api/label_key.h"

#include <cctype>

namespace ncclop::api {
namespace {

bool Alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)); }

bool NameChar(char c) { return Alnum(c) || c == '-' || c == '_' || c == '.'; }

// A DNS subdomain: lowercase letters, digits, '-' and '.', alphanumeric at both ends, at most 253.
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool lower_alnum = std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c));
    if (!lower_alnum && ((c != '-' && c != '.') || i == 0 || i + 1 == s.size())) return false;
  }
  return true;
}

}  // namespace

bool IsLabelKey(std::string_view key) {
  std::string_view name = key;
  if (auto slash = key.find('/'); slash != std::string_view::npos) {
    if (!IsDnsSubdomain(key.substr(0, slash))) return false;
    name = key.substr(slash + 1);
  }
  if (name.empty() || name.size() > 63 || !Alnum(name.front()) || !Alnum(name.back())) return false;
  for (char c : name) {
    if (!NameChar(c)) return false;
  }
  return true;
}

}  // namespace ncclop::api
