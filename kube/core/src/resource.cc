#include "kube/resource.h"

namespace kube {

std::string Resource::ApiVersion() const { return group.empty() ? version : group + "/" + version; }

std::string ApiPrefix(const Resource& r) {
  return r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
}

std::string CollectionPath(const Resource& r, std::string_view ns) {
  std::string path = ApiPrefix(r);
  if (r.namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += PercentEncode(ns);
  }
  path += "/" + r.plural;
  return path;
}

std::string ObjectPath(const Resource& r, std::string_view ns, std::string_view name,
                       std::string_view subresource) {
  std::string path = CollectionPath(r, ns);
  path += "/";
  path += PercentEncode(name);
  if (!subresource.empty()) {
    path += "/";
    path += subresource;
  }
  return path;
}

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

std::string QueryString(const QueryParams& params) {
  std::string out;
  for (const auto& [key, value] : params) {
    out += out.empty() ? '?' : '&';
    out += PercentEncode(key);
    out += '=';
    out += PercentEncode(value);
  }
  return out;
}

}  // namespace kube
