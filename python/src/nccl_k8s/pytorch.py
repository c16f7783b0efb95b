"""PyTorch: the env ``init_process_group`` reads, with the root pod's IP as MASTER_ADDR.

The operator injects MASTER_ADDR as the root pod's DNS name (``<job>-0.<job>.<ns>.svc``), a
record that exists only once the headless Service's endpoints include the root pod: until then
every rank's TCPStore connect fails to resolve and retries. Here the root posts, through its
sidecar, an id in the layout of NCCL's bootstrap handle that names its own pod IP and
MASTER_PORT (:func:`nccl_k8s.unique_id.address_id`); every other rank reads the address from the
id of its attempt. So no rank waits on DNS, a rank of a stale attempt is refused (410) instead of
joining the wrong group, and workers block until the root is up rather than spinning on connects.
PyTorch makes its own NCCL id through the store, so this id only carries the address.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from .errors import InvalidEnvError, SidecarUnavailableError
from .exchange import unique_ids
from .job_env import JobEnv, read_job_env
from .net_probe import configure_socket_ifname
from .socket_ifname import USER
from .unique_id import address_id, bootstrap_address

DEFAULT_MASTER_PORT = 29500


def _master_port() -> int:
    raw = os.environ.get("MASTER_PORT", "")
    if not raw:
        return DEFAULT_MASTER_PORT
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise InvalidEnvError(f"MASTER_PORT='{raw}' is not a port in 1..65535")
    return int(raw)


def master_address(env: Optional[JobEnv] = None, timeout: Optional[float] = None) -> Dict[str, str]:
    """``{"MASTER_ADDR": <root pod IP>, "MASTER_PORT": <port>}`` for this pod's attempt.

    The root posts its own NCCLJOB_POD_IP and MASTER_PORT (default 29500); other ranks wait for
    them through their sidecar (deadline NCCLJOB_INIT_TIMEOUT_SECONDS). Errors as for unique_id.
    """
    env = env if env is not None else read_job_env()
    port = _master_port()
    if env.is_root and not env.pod_ip:
        raise InvalidEnvError("NCCLJOB_POD_IP is not set; the root cannot tell the other ranks its address "
                              "(the operator injects it from status.podIP)")
    # With several bootstrap roots every root pod posts its own address; pod 0's is the first.
    data = unique_ids(lambda: address_id(env.pod_ip, port), env=env, timeout=timeout)[0]
    where = bootstrap_address(data)
    if where is None:
        raise SidecarUnavailableError("the root's id holds no IPv4/IPv6 address; was it posted by "
                                      "nccl_k8s.pytorch on pod 0?")
    return {"MASTER_ADDR": where.ip, "MASTER_PORT": str(where.port)}


def gloo_socket_ifname(env: JobEnv) -> Dict[str, str]:
    """``{"GLOO_SOCKET_IFNAME": <interface>}`` when unset and the package chose the interface.

    Gloo otherwise binds to the address its host name resolves to, and a pod's name may resolve to
    nothing (or to loopback) where no cluster DNS serves it; the interface that holds the pod IP is
    the one NCCL gets too. A user's NCCL_SOCKET_IFNAME is NCCL syntax (``^``, ``=``, prefixes), not
    Gloo's, so then nothing is set.
    """
    choice = configure_socket_ifname(env)
    if "GLOO_SOCKET_IFNAME" in os.environ or choice.source == USER or not choice.value:
        return {}
    return {"GLOO_SOCKET_IFNAME": choice.value}


def process_group_env(env: Optional[JobEnv] = None, timeout: Optional[float] = None) -> Dict[str, str]:
    """What ``init_process_group(init_method="env://")`` reads, one process per pod:
    MASTER_ADDR (root pod IP), MASTER_PORT, WORLD_SIZE (pods), RANK (pod index), and
    GLOO_SOCKET_IFNAME (:func:`gloo_socket_ifname`)."""
    env = env if env is not None else read_job_env()
    out = master_address(env, timeout)
    out.update(WORLD_SIZE=str(env.replicas), RANK=str(env.index))
    out.update(gloo_socket_ifname(env))
    return out


def launched_by_torchrun() -> bool:
    """True in a worker that torchrun (torch.distributed.run) started: it set RANK, WORLD_SIZE and
    MASTER_ADDR for that worker already."""
    return "TORCHELASTIC_RUN_ID" in os.environ


def init_process_group(backend: Optional[str] = None, *, env: Optional[JobEnv] = None,
                       id_timeout: Optional[float] = None, **kwargs: Any) -> None:
    """Sets :func:`process_group_env` in os.environ, then ``torch.distributed.init_process_group``
    with ``init_method="env://"``, ``backend`` and ``kwargs`` (imports torch only here; torch's
    own ``timeout=timedelta(...)`` goes there). ``id_timeout`` (seconds) bounds the wait for the
    root's address, default NCCLJOB_INIT_TIMEOUT_SECONDS.

    Under torchrun (``python -m nccl_k8s.torchrun``) the agent already did the rendezvous and set
    the env of each worker: then this only calls init_process_group, so one script serves both.
    """
    import torch.distributed as dist  # lazily: the package has no hard dependency on torch

    if not launched_by_torchrun():
        os.environ.update(process_group_env(env, id_timeout))
    dist.init_process_group(backend=backend, init_method="env://", **kwargs)
