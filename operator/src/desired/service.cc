#include "desired/service.h"

#include "contract/names.h"

namespace ncclop::desired {

Json HeadlessService(const api::NcclJob& job) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", ObjectMetadata(job, contract::ServiceName(job.name))},
          {"spec",
           {{"clusterIP", "None"},
            {"publishNotReadyAddresses", true},
            {"selector", {{std::string(contract::kLabelJobName), job.name}}},
            {"ports", Json::array({{{"name", "master"}, {"port", contract::kMasterPort}, {"protocol", "TCP"}}})}}}};
}

}  // namespace ncclop::desired
