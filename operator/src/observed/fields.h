// Reading fields of API objects as the observers need them: a field that is absent or of
// another kind reads as empty or as the fallback, never throws (an object is read, never
// trusted to be well-formed: a throw would end the operator).
#pragma once

#include <charconv>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ncclop::observed {

inline std::string StringField(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

inline const nlohmann::json& ObjectField(const nlohmann::json& object, std::string_view key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

inline const nlohmann::json& ArrayField(const nlohmann::json& object, std::string_view key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : kEmpty;
}

// A label, annotation or data value holding a whole number >= 0; `fallback` for anything else.
inline int CountField(const nlohmann::json& map, std::string_view key, int fallback) {
  if (!map.is_object()) return fallback;
  auto it = map.find(key);
  if (it == map.end() || !it->is_string()) return fallback;
  const std::string& s = it->get_ref<const std::string&>();
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 0 ? v : fallback;
}

inline const nlohmann::json& Metadata(const nlohmann::json& object) { return ObjectField(object, "metadata"); }

}  // namespace ncclop::observed
