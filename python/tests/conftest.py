"""Fixtures: the real nccl-sidecar in --standalone mode and the runtime's contract probe.

CTest passes the binaries (NCCL_K8S_TEST_SIDECAR, NCCL_K8S_TEST_CONTRACT_PROBE, NCCL_K8S_TEST_ID_TOOL);
a test whose binary is missing is skipped and says which variable to set.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import pytest


def _binary(variable: str) -> str:
    path = os.environ.get(variable, "")
    if not path or not os.access(path, os.X_OK):
        pytest.skip(f"{variable} does not name an executable (CTest sets it; or export it)")
    return path


@pytest.fixture
def contract_probe() -> str:
    return _binary("NCCL_K8S_TEST_CONTRACT_PROBE")


@pytest.fixture
def id_tool() -> str:
    return _binary("NCCL_K8S_TEST_ID_TOOL")


def pod_env(index: int, attempt: int, replicas: int = 2, url: str = "http://127.0.0.1:9", **extra: str) -> Dict[str, str]:
    env = {"NCCLJOB_NAME": "py", "NCCLJOB_UID": "uid-py", "NCCLJOB_INDEX": str(index),
           "NCCLJOB_REPLICAS": str(replicas), "NCCLJOB_GPUS_PER_POD": "0", "NCCLJOB_WORLD_SIZE": str(replicas),
           "NCCLJOB_ATTEMPT": str(attempt), "NCCLJOB_SIDECAR_URL": url}
    env.update(extra)
    return env


class Sidecar:
    """One nccl-sidecar --standalone process; ports chosen by the kernel, read from its log."""

    def __init__(self, binary: str, log: Path, index: int, attempt: int, replicas: int,
                 peer_url: Optional[str]) -> None:
        args = [binary, "--standalone", "--listen", "127.0.0.1:0", "--probe-listen", "127.0.0.1:0",
                "--log-format", "json"]
        if peer_url:
            args += ["--peer-url", peer_url]
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen(args, env=pod_env(index, attempt, replicas), stdout=out,
                                            stderr=subprocess.STDOUT)
        self.url = self._wait_started()

    def _wait_started(self, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.log.read_text(errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("msg") == "started":
                    return "http://" + entry["listen"]
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"nccl-sidecar did not start:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=20)


@pytest.fixture
def sidecars(tmp_path: Path) -> Iterator[Callable[..., Sidecar]]:
    """``sidecars(index, attempt, replicas=2, peer_url=None)`` starts one; all stop at the end."""
    binary = _binary("NCCL_K8S_TEST_SIDECAR")
    started: List[Sidecar] = []

    def start(index: int, attempt: int, replicas: int = 2, peer_url: Optional[str] = None) -> Sidecar:
        sidecar = Sidecar(binary, tmp_path / f"sidecar-{len(started)}.log", index, attempt, replicas, peer_url)
        started.append(sidecar)
        return sidecar

    yield start
    for sidecar in reversed(started):
        assert sidecar.stop() == 0, sidecar.log.read_text(errors="replace")
