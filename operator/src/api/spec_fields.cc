#include "api/spec_fields.h"

namespace ncclop::api::spec_fields {

std::string_view Named(std::string_view path) {
  if (path.ends_with("[]")) path.remove_suffix(2);
  return path;
}

std::string_view Key(std::string_view path) {
  path = Named(path);
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

bool Allows(const EnumField& field, std::string_view value) {
  for (std::string_view allowed : field.values) {
    if (value == allowed) return true;
  }
  return false;
}

std::string OneOf(const EnumField& field) {
  std::string out;
  for (std::size_t i = 0; i < field.values.size(); ++i) {
    if (i > 0) out += i + 1 == field.values.size() ? " or " : ", ";
    out += field.values[i];
  }
  return out;
}

}  // namespace ncclop::api::spec_fields
