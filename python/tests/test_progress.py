"""Progress reports: the datagram's text, and a real UDP socket on loopback playing the sidecar."""

from __future__ import annotations

import json
import socket
import time
from typing import Dict, Iterator

import pytest

import nccl_k8s
from nccl_k8s import progress
from nccl_k8s.progress import MAX_METRICS, MAX_REPORT_BYTES, ProgressSender, format_report


@pytest.fixture
def sidecar() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(5)
    yield sock
    sock.close()


def job_env(sock: socket.socket, index: int = 1, gpus: int = 4, **extra: str) -> Dict[str, str]:
    port = sock.getsockname()[1]
    env = {"NCCLJOB_INDEX": str(index), "NCCLJOB_WORLD_SIZE": str(2 * max(gpus, 1)),
           "NCCLJOB_GPUS_PER_POD": str(gpus), "NCCLJOB_ATTEMPT": "1",
           "NCCLJOB_SIDECAR_URL": f"http://127.0.0.1:{port}"}
    env.update(extra)
    return env


def received(sock: socket.socket) -> dict:
    return json.loads(sock.recv(4096))


def test_the_datagram_has_the_contracts_fields() -> None:
    assert json.loads(format_report(3, 1234, 5000, {"loss": 0.25})) == {
        "rank": 3, "step": 1234, "total": 5000, "metrics": {"loss": 0.25}}
    assert format_report(0, 7, None, {}) == b'{"rank":0,"step":7}'
    assert json.loads(format_report(1, 9, 9, {}, done=True)) == {"rank": 1, "step": 9, "total": 9, "done": True}


def test_metrics_that_break_the_rules_are_left_out() -> None:
    metrics = {"nan": float("nan"), "inf": float("inf"), "": 1.0, "n" * 33: 1.0, "bad\n": 1.0, "text": "x",
               "flag": True, 'a"b': 2}
    assert json.loads(format_report(0, 1, None, metrics)) == {"rank": 0, "step": 1, "metrics": {'a"b': 2.0}}


def test_never_more_than_the_contract_allows() -> None:
    # 31 or 32 bytes of UTF-8 each, 6 characters a letter in JSON: not all 8 fit
    metrics = {("é" * 15) + str(i): -1.2345678901234567e-300 for i in range(12)}
    report = format_report(2**63 - 1, 2**63 - 1, 2**63 - 1, metrics, done=True)
    assert len(report) <= MAX_REPORT_BYTES
    assert 1 <= len(json.loads(report)["metrics"]) < MAX_METRICS


def test_one_datagram_per_report_with_its_rank(sidecar: socket.socket) -> None:
    sender = ProgressSender(job_env(sidecar))
    assert sender.enabled
    sender.report(10, 100, {"loss": 1.5})
    assert received(sidecar) == {"rank": 4, "step": 10, "total": 100, "metrics": {"loss": 1.5}}
    sender.report(11, None, {})
    assert received(sidecar) == {"rank": 4, "step": 11}
    sender.done()
    assert received(sidecar) == {"rank": 4, "step": 11, "done": True}


def test_each_process_reports_its_local_rank(sidecar: socket.socket) -> None:
    ProgressSender(job_env(sidecar, LOCAL_RANK="3")).report(1, None, {})
    assert received(sidecar)["rank"] == 7
    ProgressSender(job_env(sidecar, LOCAL_RANK="9")).report(1, None, {})  # not a local rank: the pod's first
    assert received(sidecar)["rank"] == 4


def test_without_env_or_sidecar_nothing_happens() -> None:
    no_env = ProgressSender({})
    assert not no_env.enabled
    no_env.report(1, None, {})
    no_env.done()
    gone = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    gone.bind(("127.0.0.1", 0))
    env = job_env(gone)
    gone.close()
    sender = ProgressSender(env)
    started = time.monotonic()
    for step in range(1000):
        sender.report(step, None, {})  # refused by the kernel: dropped
    assert time.monotonic() - started < 1


def test_the_module_functions_use_the_process_env(sidecar: socket.socket, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in job_env(sidecar, index=0, gpus=0).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(progress, "_sender", None)
    nccl_k8s.report_progress(5, loss=0.5)
    assert received(sidecar) == {"rank": 0, "step": 5, "metrics": {"loss": 0.5}}
    nccl_k8s.report_progress(-1)  # not a step: nothing sent, nothing raised
    nccl_k8s.report_progress("6")  # type: ignore[arg-type]
    nccl_k8s.report_progress_done()
    assert received(sidecar) == {"rank": 0, "step": 5, "done": True}
