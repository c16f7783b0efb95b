#include "desired/compute_domain.h"

#include <string>

#include "contract/names.h"

namespace ncclop::desired {

Json ComputeDomain(const api::NcclJob& job) {
  const api::ComputeDomainRequest& cd = job.spec.compute_domain;
  return {{"apiVersion", std::string(kComputeDomainGroup) + "/" + kComputeDomainVersion},
          {"kind", "ComputeDomain"},
          {"metadata", ObjectMetadata(job, contract::ComputeDomainName(job.name))},
          {"spec",
           {{"numNodes", cd.num_nodes},
            {"channel",
             {{"resourceClaimTemplate", {{"name", contract::ComputeDomainChannelName(job.name)}}},
              {"allocationMode", cd.allocation_mode}}}}}};
}

}  // namespace ncclop::desired
