"""Which pods make an id when a job bootstraps from several roots (NCCLJOB_BOOTSTRAP_ROOTS).

The same rule as contract/include/contract/bootstrap_roots.h (checked against it by
tests/test_runtime_agreement.py): NCCL's ``ncclCommInitRankScalable`` splits the ranks into one
contiguous block per id (the first ``world % roots`` blocks one rank larger), every rank talks to
its block's root, and NCCL's guide asks the block's first rank to make that id. Root ``j`` is
the pod holding that first rank; the ids are listed in block order.
"""

from __future__ import annotations

from typing import List


def root_pod(root: int, roots: int, replicas: int, ranks_per_pod: int) -> int:
    """Pod index of root ``root`` (``0 <= root < roots <= replicas``)."""
    world = replicas * ranks_per_pod
    first_rank = root * (world // roots) + min(root, world % roots)
    return first_rank // ranks_per_pod


def root_pods(roots: int, replicas: int, ranks_per_pod: int) -> List[int]:
    """Every root pod, in id order."""
    return [root_pod(j, roots, replicas, ranks_per_pod) for j in range(roots)]


def root_slot(index: int, roots: int, replicas: int, ranks_per_pod: int) -> int:
    """Which id pod ``index`` makes (its position in the list), or -1 when it makes none."""
    low, high = 0, roots - 1
    while low <= high:
        mid = (low + high) // 2
        pod = root_pod(mid, roots, replicas, ranks_per_pod)
        if pod == index:
            return mid
        if pod < index:
            low = mid + 1
        else:
            high = mid - 1
    return -1
