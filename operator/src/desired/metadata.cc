#include "desired/metadata.h"

#include "contract/names.h"

namespace ncclop::desired {

Json OwnerReference(const api::NcclJob& job) {
  return {{"apiVersion", contract::kApiVersion},
          {"kind", contract::kKind},
          {"name", job.name},
          {"uid", job.uid},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

Json ObjectMetadata(const api::NcclJob& job, const std::string& name) {
  return {{"name", name},
          {"namespace", job.namespace_},
          {"labels", {{std::string(contract::kLabelJobName), job.name}}},
          {"ownerReferences", Json::array({OwnerReference(job)})}};
}

}  // namespace ncclop::desired
