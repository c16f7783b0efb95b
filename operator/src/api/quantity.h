// Kubernetes resource quantities as text (resource.Quantity's form: "8Gi", "500m", "1e3", "0"),
// for the spec fields and flags that take one. Only what the operator needs: whether a text is
// one (unsigned) and whether it is zero; the API server parses them.
#pragma once

#include <string_view>

namespace ncclop::api {

// The regular expression of an unsigned quantity: digits with an optional fraction, then a
// binary (Ki..Ei) or decimal (n u m k M G T P E) suffix or an exponent. The CRD's `pattern` for
// a quantity field is this text (operator/tests/api/spec_fields_test.cc holds them together).
inline constexpr std::string_view kQuantityPattern =
    R"(^([0-9]+(\.[0-9]*)?|\.[0-9]+)([numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]+)?$)";

bool IsQuantity(std::string_view text);

// Whether a quantity (IsQuantity) is zero: "0", "0Gi", "0.0", "0e3".
bool IsZeroQuantity(std::string_view text);

}  // namespace ncclop::api
