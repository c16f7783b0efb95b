#include "desired/rbac.h"

#include "contract/bootstrap_roots.h"
#include "contract/names.h"

namespace ncclop::desired {
namespace {

std::string TemplateServiceAccountName(const api::NcclJob& job) {
  const Json& tmpl = job.spec.pod_template;
  if (!tmpl.is_object() || !tmpl.contains("spec") || !tmpl["spec"].is_object()) return "";
  const Json& spec = tmpl["spec"];
  for (const char* field : {"serviceAccountName", "serviceAccount"}) {
    if (spec.contains(field) && spec[field].is_string() && !spec[field].get<std::string>().empty()) {
      return spec[field].get<std::string>();
    }
  }
  return "";
}

}  // namespace

std::string PodServiceAccountName(const api::NcclJob& job) {
  std::string named = TemplateServiceAccountName(job);
  return named.empty() ? contract::ServiceAccountName(job.name) : named;
}

bool UsesJobServiceAccount(const api::NcclJob& job) { return TemplateServiceAccountName(job).empty(); }

Json ServiceAccount(const api::NcclJob& job) {
  return {{"apiVersion", "v1"},
          {"kind", "ServiceAccount"},
          {"metadata", ObjectMetadata(job, contract::ServiceAccountName(job.name))}};
}

// The pods whose sidecars patch their own id annotations: every bootstrap root (pod 0 alone by default).
static Json RootPodNames(const api::NcclJob& job) {
  Json names = Json::array();
  for (int pod : contract::BootstrapRootPods(job.spec.bootstrap_roots, job.spec.replicas, job.spec.LocalWorldSize())) {
    names.push_back(contract::PodName(job.name, pod));
  }
  return names;
}

Json Role(const api::NcclJob& job) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "Role"},
          {"metadata", ObjectMetadata(job, contract::RoleName(job.name))},
          {"rules",
           Json::array({
               {{"apiGroups", {""}},
                {"resources", {"configmaps"}},
                {"resourceNames", {contract::ConfigMapName(job.name)}},
                {"verbs", {"get", "list", "watch"}}},
               {{"apiGroups", {""}},
                {"resources", {"pods"}},
                {"resourceNames", RootPodNames(job)},
                {"verbs", {"get", "patch"}}},
           })}};
}

Json RoleBinding(const api::NcclJob& job) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "RoleBinding"},
          {"metadata", ObjectMetadata(job, contract::RoleName(job.name))},
          {"roleRef",
           {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", contract::RoleName(job.name)}}},
          {"subjects",
           Json::array({{{"kind", "ServiceAccount"},
                         {"name", PodServiceAccountName(job)},
                         {"namespace", job.namespace_}}})}};
}

}  // namespace ncclop::desired
