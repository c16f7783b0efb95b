#include "desired/rbac.h"

#include "api/names.h"

namespace ncclop::desired {

Json ServiceAccount(const api::NcclJob& job) {
  return {{"apiVersion", "v1"},
          {"kind", "ServiceAccount"},
          {"metadata", ObjectMetadata(job, api::ServiceAccountName(job.name))}};
}

Json Role(const api::NcclJob& job) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "Role"},
          {"metadata", ObjectMetadata(job, api::RoleName(job.name))},
          {"rules",
           Json::array({
               {{"apiGroups", {""}},
                {"resources", {"configmaps"}},
                {"resourceNames", {api::ConfigMapName(job.name)}},
                {"verbs", {"get", "list", "watch"}}},
               {{"apiGroups", {""}},
                {"resources", {"pods"}},
                {"resourceNames", {api::PodName(job.name, 0)}},
                {"verbs", {"get", "patch"}}},
           })}};
}

Json RoleBinding(const api::NcclJob& job) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "RoleBinding"},
          {"metadata", ObjectMetadata(job, api::RoleName(job.name))},
          {"roleRef",
           {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", api::RoleName(job.name)}}},
          {"subjects",
           Json::array({{{"kind", "ServiceAccount"},
                         {"name", api::ServiceAccountName(job.name)},
                         {"namespace", job.namespace_}}})}};
}

}  // namespace ncclop::desired
