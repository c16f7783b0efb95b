// Which pods make an id when a job bootstraps from several roots (spec.network.bootstrapRoots,
// NCCLJOB_BOOTSTRAP_ROOTS; NCCL's ncclCommInitRankScalable). NCCL splits the ranks into one
// contiguous block per id (the first world % roots blocks one rank larger) and each rank talks to
// the root of its block; NCCL's guide asks that the first rank of each block makes that block's id.
// Root j is therefore the pod that holds NCCL's first rank of block j, and the ids are listed in
// block order. With roots <= replicas the root pods are distinct and evenly spaced; with one GPU
// a pod they are exactly NCCL's rankHasRoot ranks. Header-only and pure: the operator, the sidecar
// and the runtime share it (python/src/nccl_k8s/bootstrap_roots.py has the same rule, and
// python/tests/test_runtime_agreement.py checks it against this one).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace contract {

// Pod index of root `root` (0 <= root < roots <= replicas; ranks_per_pod >= 1).
inline int BootstrapRootPod(int root, int roots, int replicas, int ranks_per_pod) {
  const int64_t world = static_cast<int64_t>(replicas) * ranks_per_pod;
  const int64_t per_root = world / roots;
  const int64_t first_rank = root * per_root + std::min<int64_t>(root, world % roots);
  return static_cast<int>(first_rank / ranks_per_pod);
}

// Every root pod, in id order.
inline std::vector<int> BootstrapRootPods(int roots, int replicas, int ranks_per_pod) {
  std::vector<int> pods;
  for (int j = 0; j < roots; ++j) pods.push_back(BootstrapRootPod(j, roots, replicas, ranks_per_pod));
  return pods;
}

// Which id pod `index` makes (its position in the list), or -1 when it makes none.
inline int BootstrapRootSlot(int index, int roots, int replicas, int ranks_per_pod) {
  // Root pods are increasing in j: a binary search over j keeps this O(log roots) for big jobs.
  int low = 0, high = roots - 1;
  while (low <= high) {
    int mid = low + (high - low) / 2;
    int pod = BootstrapRootPod(mid, roots, replicas, ranks_per_pod);
    if (pod == index) return mid;
    if (pod < index) low = mid + 1; else high = mid - 1;
  }
  return -1;
}

}  // namespace contract
