#include "desired/service.h"

#include "api/names.h"

namespace ncclop::desired {

Json HeadlessService(const api::NcclJob& job) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", ObjectMetadata(job, api::ServiceName(job.name))},
          {"spec",
           {{"clusterIP", "None"},
            {"publishNotReadyAddresses", true},
            {"selector", {{std::string(api::kLabelJobName), job.name}}},
            {"ports", Json::array({{{"name", "master"}, {"port", api::kMasterPort}, {"protocol", "TCP"}}})}}}};
}

}  // namespace ncclop::desired
