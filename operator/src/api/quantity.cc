#include "api/quantity.h"

#include <regex>
#include <string>

namespace ncclop::api {

bool IsQuantity(std::string_view text) {
  static const std::regex kQuantity{std::string(kQuantityPattern)};
  return std::regex_match(text.begin(), text.end(), kQuantity);
}

bool IsZeroQuantity(std::string_view text) {
  if (!IsQuantity(text)) return false;
  // The number ends where the suffix or exponent begins; it is zero when it has no other digit.
  for (char c : text) {
    if (c != '0' && c != '.') return c < '0' || c > '9';
  }
  return true;
}

}  // namespace ncclop::api
