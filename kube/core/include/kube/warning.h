// The API server's warnings: each is a `Warning:` response header in RFC 7234's form,
// `299 - "text"` (deprecated fields, unknown fields dropped under fieldValidation=Warn, an
// admission webhook's or policy's words). Pure parsing, so it is unit tested.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kube {

// The texts of one Warning header's value, which may hold several comma-separated warnings:
// code (3 digits), agent, quoted text with backslash escapes, optional quoted date. The first
// malformed part ends the parse (what came before it is kept); only code 299 (a persistent
// warning, what the API server sends) is returned.
std::vector<std::string> ParseWarningHeader(std::string_view value);

}  // namespace kube
