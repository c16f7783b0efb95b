// Which collection a call addresses (group, version, plural, scope) and how its URL paths
// and query strings are built. Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube {

struct Resource {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string plural;   // "pods"
  bool namespaced = true;

  // "v1" or "apps/v1": the apiVersion field of objects of this resource.
  std::string ApiVersion() const;
};

namespace resources {
inline const Resource kPods{"", "v1", "pods", true};
inline const Resource kConfigMaps{"", "v1", "configmaps", true};
inline const Resource kServices{"", "v1", "services", true};
inline const Resource kServiceAccounts{"", "v1", "serviceaccounts", true};
inline const Resource kSecrets{"", "v1", "secrets", true};
inline const Resource kNamespaces{"", "v1", "namespaces", false};
inline const Resource kNodes{"", "v1", "nodes", false};
inline const Resource kCoreEvents{"", "v1", "events", true};
inline const Resource kEvents{"events.k8s.io", "v1", "events", true};
inline const Resource kRoles{"rbac.authorization.k8s.io", "v1", "roles", true};
inline const Resource kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", true};
inline const Resource kLeases{"coordination.k8s.io", "v1", "leases", true};
inline const Resource kCustomResourceDefinitions{"apiextensions.k8s.io", "v1",
                                                 "customresourcedefinitions", false};
}  // namespace resources

// "/api/v1" or "/apis/<group>/<version>".
std::string ApiPrefix(const Resource& r);
// Collection path. For a namespaced resource an empty namespace means all namespaces;
// for a cluster-scoped resource the namespace is ignored.
std::string CollectionPath(const Resource& r, std::string_view ns);
// Object path, optionally with a subresource ("status", "scale", "log", ...).
std::string ObjectPath(const Resource& r, std::string_view ns, std::string_view name,
                       std::string_view subresource = {});

using QueryParams = std::vector<std::pair<std::string, std::string>>;
// "?a=1&b=x%2Fy" (empty string when params is empty); values are percent-encoded.
std::string QueryString(const QueryParams& params);
std::string PercentEncode(std::string_view s);

}  // namespace kube
