#include "init_deadline.h"

namespace nccl_k8s {

std::string RankRange(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  std::string out = std::to_string(ranks.front());
  if (ranks.size() > 1) out += ".." + std::to_string(ranks.back());
  return out;
}

std::string InitDeadlineMessage(const std::vector<int>& ranks, int world_size) {
  return "rank(s) " + RankRange(ranks) + ": communicator init did not finish before the deadline; some of the " +
         std::to_string(world_size) +
         " ranks never joined (a pod that did not start, a wrong NCCL_SOCKET_IFNAME, or a firewall between pods)";
}

}  // namespace nccl_k8s
