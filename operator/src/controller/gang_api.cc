#include "controller/gang_api.h"

#include "contract/names.h"
#include "controller/observe.h"

namespace ncclop::controller {

GangApiAnswer FindGangApi(kube::Client& client, const std::string& ns) {
  kube::ListOptions options;
  options.label_selector = std::string(contract::kLabelJobName);  // "has the label"
  GangApiAnswer answer;
  for (desired::GangApi api : desired::kGangApis) {
    std::vector<kube::Resource> needed = {GangWorkloads(api)};
    if (desired::GangHasPodGroups(api)) needed.push_back(GangPodGroups(api));
    kube::Status failed;
    for (const kube::Resource& r : needed) {
      auto listed = client.List(r, ns, options);
      if (!listed.ok()) {
        failed = listed.status();
        break;
      }
    }
    if (failed.ok()) return {api, answer.why_not, answer.certain};
    if (!failed.IsNotFound() && !failed.IsForbidden()) answer.certain = false;
    if (!answer.why_not.empty()) answer.why_not += "; ";
    answer.why_not += std::string(desired::GangApiVersion(api)) + ": " + failed.ToString();
  }
  return answer;
}

std::string DescribeGangApi(desired::GangApi api) {
  if (api == desired::GangApi::kNone) {
    return "no scheduling.k8s.io gang scheduling API is served (or allowed): no native gang scheduling";
  }
  return "scheduling.k8s.io/" + std::string(desired::GangApiVersion(api)) +
         (desired::GangHasPodGroups(api) ? " Workloads and PodGroups" : " Workloads") +
         " are served: jobs are gang scheduled (spec.gangScheduling Auto)";
}

}  // namespace ncclop::controller
