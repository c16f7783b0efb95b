"""The env contract the operator injects into every container (docs/contracts.md).

The same parsing and cross-checks as the C++ runtime's ``ParseJobEnv`` (runtime/src/job_env.cc),
with the same messages: every missing or malformed variable is named in one error.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import List, Mapping, Optional

from .bootstrap_roots import root_slot as _root_slot
from .errors import InvalidEnvError

_MAX_COUNT = 1 << 20
_MAX_TIMEOUT_SECONDS = 7 * 24 * 3600
_INTEGER = re.compile(r"-?[0-9]+")  # what std::from_chars accepts for a long: no '+', no spaces


@dataclass(frozen=True)
class JobEnv:
    """This pod's place in its NcclJob.

    Attributes mirror ``nccl_k8s::JobEnv``: ``index`` (NCCLJOB_INDEX), ``replicas`` (derived from
    the world size; NCCLJOB_REPLICAS is checked against it), ``gpus_per_pod`` (0 means one
    CPU-only rank per pod), ``world_size`` (NCCL ranks in all), ``attempt`` (NCCLJOB_ATTEMPT: the
    attempt the pod was created for; the one it serves is :func:`nccl_k8s.served_attempt`), ``sidecar_url``,
    ``pod_ip`` ("" when not given), ``init_timeout`` (seconds, default 300), ``job_name``,
    ``bootstrap_roots`` (NCCLJOB_BOOTSTRAP_ROOTS, default 1) and ``bootstrap_roots_set`` (it was given).
    """

    index: int
    world_size: int
    gpus_per_pod: int
    attempt: int
    sidecar_url: str
    replicas: int = 1
    init_timeout: float = 300.0
    job_name: str = ""
    pod_ip: str = ""
    bootstrap_roots: int = 1
    bootstrap_roots_set: bool = False

    @property
    def ranks_per_pod(self) -> int:
        """NCCL ranks in this pod: ``max(gpus_per_pod, 1)``."""
        return self.gpus_per_pod if self.gpus_per_pod > 0 else 1

    @property
    def first_rank(self) -> int:
        """NCCL rank of this pod's first local GPU (local GPU ``g`` is ``first_rank + g``)."""
        return self.index * self.ranks_per_pod

    @property
    def root_slot(self) -> int:
        """Which id of the job's list this pod makes, or -1 (:mod:`nccl_k8s.bootstrap_roots`)."""
        return _root_slot(self.index, self.bootstrap_roots, self.replicas, self.ranks_per_pod)

    @property
    def is_root(self) -> bool:
        """This pod makes an id of every attempt: pod 0 with one root, each root pod with several."""
        return self.root_slot >= 0


def _read_int(lookup: Mapping[str, str], name: str, low: int, high: int, required: bool,
              problems: List[str]) -> Optional[int]:
    raw = lookup.get(name)
    if raw is None or raw == "":
        if required:
            problems.append(f"{name} is not set")
        return None
    value = int(raw) if _INTEGER.fullmatch(raw) else None
    if value is None or value < low or value > high:
        problems.append(f"{name}='{raw}' is not an integer in [{low}, {high}]")
        return None
    return value


def parse_job_env(lookup: Mapping[str, str]) -> JobEnv:
    """Parses and cross-checks the contract from ``lookup`` (a dict in tests, ``os.environ``).

    Raises :class:`InvalidEnvError` naming every problem at once.
    """
    problems: List[str] = []
    index = _read_int(lookup, "NCCLJOB_INDEX", 0, _MAX_COUNT, True, problems)
    world = _read_int(lookup, "NCCLJOB_WORLD_SIZE", 1, _MAX_COUNT, True, problems)
    gpus = _read_int(lookup, "NCCLJOB_GPUS_PER_POD", 0, 1024, True, problems)
    attempt = _read_int(lookup, "NCCLJOB_ATTEMPT", 1, _MAX_COUNT, True, problems)
    replicas = _read_int(lookup, "NCCLJOB_REPLICAS", 1, _MAX_COUNT, False, problems)
    timeout = _read_int(lookup, "NCCLJOB_INIT_TIMEOUT_SECONDS", 1, _MAX_TIMEOUT_SECONDS, False, problems)
    roots = _read_int(lookup, "NCCLJOB_BOOTSTRAP_ROOTS", 1, _MAX_COUNT, False, problems)

    url = lookup.get("NCCLJOB_SIDECAR_URL")
    if url is None or url == "":
        problems.append("NCCLJOB_SIDECAR_URL is not set")
        url = ""
    elif not url.startswith("http://"):
        problems.append(f"NCCLJOB_SIDECAR_URL='{url}' is not an http:// URL "
                        "(the sidecar listens on http://127.0.0.1:8471)")
        url = ""

    derived_replicas = 1
    if world is not None and gpus is not None:
        per_pod = gpus if gpus > 0 else 1
        if world % per_pod != 0:
            problems.append(f"NCCLJOB_WORLD_SIZE={world} is not a multiple of the ranks per pod ({per_pod})")
        else:
            derived_replicas = world // per_pod
            if replicas is not None and replicas != derived_replicas:
                problems.append(f"NCCLJOB_REPLICAS={replicas} disagrees with NCCLJOB_WORLD_SIZE / "
                                f"max(NCCLJOB_GPUS_PER_POD, 1) = {derived_replicas}")
            if roots is not None and roots > derived_replicas:
                problems.append(f"NCCLJOB_BOOTSTRAP_ROOTS={roots} is more than the number of pods ({derived_replicas})")
            if index is not None and index >= derived_replicas:
                problems.append(f"NCCLJOB_INDEX={index} is not below the number of pods ({derived_replicas})")

    if problems:
        raise InvalidEnvError("; ".join(problems) +
                              ". The NcclJob operator injects these into every container; when running by "
                              "hand, export them (see docs/contracts.md, 'Env injected').")
    assert index is not None and world is not None and gpus is not None and attempt is not None
    return JobEnv(index=index, world_size=world, gpus_per_pod=gpus, attempt=attempt, sidecar_url=url,
                  replicas=derived_replicas, init_timeout=float(timeout) if timeout is not None else 300.0,
                  job_name=lookup.get("NCCLJOB_NAME", ""), pod_ip=lookup.get("NCCLJOB_POD_IP", ""),
                  bootstrap_roots=roots if roots is not None else 1, bootstrap_roots_set=roots is not None)


def read_job_env() -> JobEnv:
    """:func:`parse_job_env` of this process's environment."""
    return parse_job_env(os.environ)
