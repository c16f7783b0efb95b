"""``unique_id()``: this pod's id for its attempt, the Python form of the runtime's ObtainUniqueId."""

from __future__ import annotations

import logging
import time
from typing import Callable, Optional

from .errors import InvalidArgumentError
from .job_env import JobEnv, read_job_env
from .net_probe import configure_socket_ifname
from .sidecar import fetch_id, post_id
from .unique_id import IdLike, as_id_bytes, bootstrap_address

_log = logging.getLogger("nccl_k8s")


def unique_id(create: Optional[Callable[[], IdLike]] = None, *, env: Optional[JobEnv] = None,
              timeout: Optional[float] = None) -> bytes:
    """The 128 bytes of this pod's attempt.

    Root (index 0): sets NCCL_SOCKET_IFNAME (unless set), calls ``create()`` (your framework's
    ncclGetUniqueId, e.g. ``cupy.cuda.nccl.get_unique_id``; NCCL's bootstrap root then listens in
    this process) and posts the id to its sidecar. Other pods: set NCCL_SOCKET_IFNAME and long-poll
    their sidecar until it serves the id of their attempt; ``create`` is not called there, so every
    rank runs the same line.

    ``env`` defaults to :func:`read_job_env`; ``timeout`` (seconds) to NCCLJOB_INIT_TIMEOUT_SECONDS.
    Raises InvalidEnvError, SidecarUnavailableError, DeadlineExceededError, StaleAttemptError
    (a later attempt exists: exit), InvalidArgumentError (root without ``create``, id not 128 bytes).
    """
    env = env if env is not None else read_job_env()
    deadline = time.monotonic() + (timeout if timeout is not None else env.init_timeout)
    configure_socket_ifname(env)  # before the framework's first NCCL call, which reads it
    if env.is_root:
        if create is None:
            raise InvalidArgumentError("pod 0 makes the id: pass create= (e.g. cupy.cuda.nccl.get_unique_id)")
        data = as_id_bytes(create())
        where = bootstrap_address(data)
        _log.info("root id created for attempt %d%s", env.attempt,
                  f", bootstrap {where.ip}:{where.port}" if where else "")
        post_id(env.sidecar_url, data, env.attempt, deadline)
        _log.info("root id handed to the sidecar for attempt %d", env.attempt)
        return data
    started = time.monotonic()
    data = fetch_id(env.sidecar_url, env.attempt, deadline)
    _log.info("id received from the sidecar for attempt %d after %.0f ms", env.attempt,
              (time.monotonic() - started) * 1000)
    return data
