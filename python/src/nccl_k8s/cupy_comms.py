"""CuPy: one ``cupy.cuda.nccl.NcclCommunicator`` per local GPU, from this pod's id.

CuPy is imported only when called: the package needs nothing beyond the standard library.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from .errors import InvalidArgumentError
from .exchange import unique_id
from .job_env import JobEnv, read_job_env


def cupy_id(data: bytes) -> Tuple[int, ...]:
    """The id in the form CuPy before 14 hands out and takes: 128 signed chars (-128..127)."""
    return tuple(b - 256 if b > 127 else b for b in data)


def _communicator(nccl: Any, world_size: int, data: bytes, rank: int) -> Any:
    """``NcclCommunicator(world_size, id, rank)`` with the id in the form this CuPy takes: bytes
    (CuPy 14) or a tuple of signed chars (earlier). A wrong form is refused with TypeError before
    NCCL is called, so trying the other one is safe (calling get_unique_id to learn the form is
    not: it starts a bootstrap root in this process)."""
    try:
        return nccl.NcclCommunicator(world_size, data, rank)
    except TypeError:
        return nccl.NcclCommunicator(world_size, cupy_id(data), rank)


def communicators(env: Optional[JobEnv] = None, devices: Optional[Sequence[int]] = None,
                  timeout: Optional[float] = None) -> List[Any]:
    """NcclCommunicators of this pod: local GPU ``g`` (device ``devices[g]``, default ``g``) gets
    NCCL rank ``env.first_rank + g`` of ``env.world_size``.

    The root makes the id with ``cupy.cuda.nccl.get_unique_id`` and posts it; others wait for it
    (:func:`nccl_k8s.unique_id`, with its deadline and errors). Several local GPUs are initialised
    in one NCCL group. CuPy's communicator init is blocking: the deadline covers the id exchange;
    a rank that never joins is caught by NCCL's own bootstrap timeout, not by this deadline.
    """
    import cupy  # lazily: no hard dependency
    from cupy.cuda import nccl

    env = env if env is not None else read_job_env()
    if env.bootstrap_roots != 1:
        raise InvalidArgumentError(f"this job bootstraps from {env.bootstrap_roots} roots (NCCLJOB_BOOTSTRAP_ROOTS), "
                                   "and CuPy's NcclCommunicator takes one id; use the runtime (nccl_k8s_init) or "
                                   "ncclCommInitRankScalable with nccl_k8s.unique_ids()")
    devices = list(devices) if devices is not None else list(range(env.ranks_per_pod))
    if len(devices) != env.ranks_per_pod:
        raise ValueError(f"{len(devices)} devices given for {env.ranks_per_pod} ranks per pod")
    uid = unique_id(nccl.get_unique_id, env=env, timeout=timeout)
    comms = []
    if len(devices) == 1:
        with cupy.cuda.Device(devices[0]):
            comms.append(_communicator(nccl, env.world_size, uid, env.first_rank))
        return comms
    nccl.groupStart()
    try:
        for g, device in enumerate(devices):
            with cupy.cuda.Device(device):
                comms.append(_communicator(nccl, env.world_size, uid, env.first_rank + g))
    finally:
        nccl.groupEnd()
    return comms
