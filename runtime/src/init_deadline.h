// What the runtime says when communicator init outlives its deadline (pure; both modes).
#pragma once

#include <string>
#include <vector>

namespace nccl_k8s {

// "0" for one rank, "4..7" for several: the NCCL ranks of this process.
std::string RankRange(const std::vector<int>& ranks);

// "rank(s) R: communicator init did not finish before the deadline; some of the W ranks never
// joined (likely causes)". Each mode appends what it did about it.
std::string InitDeadlineMessage(const std::vector<int>& ranks, int world_size);

}  // namespace nccl_k8s
