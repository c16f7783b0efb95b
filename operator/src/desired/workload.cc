#include "desired/workload.h"

#include <algorithm>

#include "api/names.h"

namespace ncclop::desired {

Json Workload(const api::NcclJob& job, const PodOptions& options) {
  // Every pod of the job asks for the same resources; pod 0 of the current attempt stands for all.
  Json pod = Pod(job, 0, std::max(job.status.attempt, 1), options);
  Json labels = pod["metadata"].value("labels", Json::object());
  labels.erase(std::string(api::kLabelIndex));
  labels.erase(std::string(api::kLabelAttempt));
  Json metadata = ObjectMetadata(job, api::WorkloadName(job.name));
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Workload"},
          {"metadata", std::move(metadata)},
          {"spec",
           {{"queueName", job.queue_name},
            {"podSets", Json::array({{{"name", kWorkloadPodSetName},
                                      {"count", job.spec.replicas},
                                      {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod["spec"]}}}}})}}}};
}

}  // namespace ncclop::desired
