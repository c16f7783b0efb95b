"""``unique_ids()`` / ``unique_id()``: this pod's ids for its attempt, the Python form of the
runtime's ObtainUniqueIds / ObtainUniqueId."""

from __future__ import annotations

import logging
import time
from typing import Callable, List, Optional

from .errors import InvalidArgumentError
from .job_env import JobEnv, read_job_env
from .net_probe import configure_socket_ifname
from .sidecar import fetch_attempt, fetch_ids, post_id
from .unique_id import IdLike, as_id_bytes, bootstrap_address

_log = logging.getLogger("nccl_k8s")


def served_attempt(*, env: Optional[JobEnv] = None, timeout: Optional[float] = None) -> int:
    """The attempt this pod serves now, as its sidecar says (GET /v1/info): after the kubelet
    restarted the pod's containers in place for a later attempt it is past ``env.attempt``
    (NCCLJOB_ATTEMPT, the attempt the pod was created for). Waits for a sidecar that does not
    answer yet, up to ``timeout`` (default NCCLJOB_INIT_TIMEOUT_SECONDS). :func:`unique_ids` uses it."""
    env = env if env is not None else read_job_env()
    return fetch_attempt(env.sidecar_url, time.monotonic() + (timeout if timeout is not None else env.init_timeout))


def unique_ids(create: Optional[Callable[[], IdLike]] = None, *, env: Optional[JobEnv] = None,
               timeout: Optional[float] = None) -> List[bytes]:
    """The ids of this pod's attempt, one per bootstrap root (NCCLJOB_BOOTSTRAP_ROOTS, default 1),
    in the order ``ncclCommInitRankScalable`` takes them.

    The attempt is the sidecar's (:func:`served_attempt`), not NCCLJOB_ATTEMPT: they differ once
    the pod was restarted in place. A root pod (pod 0 with one root; :mod:`nccl_k8s.bootstrap_roots` with several) sets
    NCCL_SOCKET_IFNAME (unless set), calls ``create()`` (your framework's ncclGetUniqueId, e.g.
    ``cupy.cuda.nccl.get_unique_id``; NCCL's bootstrap root then listens in this process) and
    posts the id to its sidecar. Every pod but a lone root then long-polls its sidecar until it
    serves the list of its attempt; ``create`` is called on root pods only, so every rank runs the
    same line.

    ``env`` defaults to :func:`read_job_env`; ``timeout`` (seconds) to NCCLJOB_INIT_TIMEOUT_SECONDS.
    Raises InvalidEnvError, SidecarUnavailableError, DeadlineExceededError, StaleAttemptError
    (a later attempt exists: exit), InvalidArgumentError (root without ``create``, id not 128 bytes).
    """
    env = env if env is not None else read_job_env()
    deadline = time.monotonic() + (timeout if timeout is not None else env.init_timeout)
    configure_socket_ifname(env)  # before the framework's first NCCL call, which reads it
    data = None
    if env.is_root:
        if create is None:
            raise InvalidArgumentError(f"pod {env.index} makes the id: pass create= (e.g. cupy.cuda.nccl.get_unique_id)")
        data = as_id_bytes(create())
    attempt = fetch_attempt(env.sidecar_url, deadline)
    _log.info("attempt %d learnt from the sidecar (NCCLJOB_ATTEMPT=%d)", attempt, env.attempt)
    if data is not None:
        where = bootstrap_address(data)
        _log.info("root id %d created for attempt %d%s", env.root_slot, attempt,
                  f", bootstrap {where.ip}:{where.port}" if where else "")
        post_id(env.sidecar_url, data, attempt, deadline)
        _log.info("root id handed to the sidecar for attempt %d", attempt)
        if env.bootstrap_roots == 1:
            return [data]
    started = time.monotonic()
    ids = fetch_ids(env.sidecar_url, attempt, env.bootstrap_roots, deadline)
    _log.info("%d id(s) received from the sidecar for attempt %d after %.0f ms", len(ids), attempt,
              (time.monotonic() - started) * 1000)
    return ids


def unique_id(create: Optional[Callable[[], IdLike]] = None, *, env: Optional[JobEnv] = None,
              timeout: Optional[float] = None) -> bytes:
    """The 128 bytes of this pod's attempt for a job with one bootstrap root: :func:`unique_ids`'
    only id. Raises InvalidArgumentError when the job has several roots (use unique_ids); else as
    unique_ids."""
    env = env if env is not None else read_job_env()
    if env.bootstrap_roots != 1:
        raise InvalidArgumentError(f"this job bootstraps from {env.bootstrap_roots} roots (NCCLJOB_BOOTSTRAP_ROOTS): "
                                   "one id is not enough; use unique_ids() and ncclCommInitRankScalable")
    return unique_ids(create, env=env, timeout=timeout)[0]
