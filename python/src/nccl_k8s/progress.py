"""Training progress, reported to the pod's sidecar (docs/contracts.md, "Progress").

    for step in range(1, steps + 1):
        train(step)
        nccl_k8s.report_progress(step, total=steps, loss=loss)
    nccl_k8s.report_progress_done()

Each call sends one UDP datagram to the sidecar on 127.0.0.1 (the port of NCCLJOB_SIDECAR_URL)
and returns: it never blocks and never raises. Without the NcclJob env, or with no sidecar
listening, it does nothing. The same datagram and rules as the C++ runtime's
``nccl_k8s::ReportProgress`` (runtime/src/progress_sender.cc): the rank is
``NCCLJOB_INDEX * max(NCCLJOB_GPUS_PER_POD, 1) + LOCAL_RANK`` (torchrun's; 0 when unset); at
most 8 metrics of names of 1 to 32 bytes and finite numbers are sent, and fewer when the
datagram would pass 1024 bytes.
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
from typing import List, Mapping, Optional

from .errors import NcclK8sError
from .job_env import JobEnv, parse_job_env

MAX_REPORT_BYTES = 1024   # contract::kProgressReportMaxBytes
MAX_METRICS = 8           # contract::kProgressMaxMetrics
MAX_METRIC_NAME = 32      # contract::kProgressMetricNameMax


def reporting_rank(env: JobEnv, lookup: Mapping[str, str]) -> int:
    """The rank a process reports: ``env.first_rank`` plus LOCAL_RANK when that is a local rank."""
    raw = lookup.get("LOCAL_RANK", "")
    local = int(raw) if raw.isdigit() else 0
    return env.first_rank + (local if local < env.ranks_per_pod else 0)


def format_report(rank: int, step: int, total: Optional[int], metrics: Mapping[str, float],
                  done: bool = False) -> bytes:
    """The datagram: {"rank","step","total"?,"metrics"?,"done"?} of at most MAX_REPORT_BYTES."""
    head = f'{{"rank":{rank},"step":{step}' + (f',"total":{total}' if total is not None else "")
    tail = (',"done":true' if done else "") + "}"
    kept: List[str] = []
    for name, value in list(metrics.items())[:MAX_METRICS]:
        if not _good_metric(name, value):
            continue
        piece = json.dumps(name) + ":" + repr(float(value))
        body = ",".join(kept + [piece])
        if len((head + ',"metrics":{' + body + "}" + tail).encode()) > MAX_REPORT_BYTES:
            continue
        kept.append(piece)
    metrics_part = ',"metrics":{' + ",".join(kept) + "}" if kept else ""
    return (head + metrics_part + tail).encode()


def _good_metric(name: object, value: object) -> bool:
    if not isinstance(name, str) or not 1 <= len(name.encode()) <= MAX_METRIC_NAME:
        return False
    if any(ord(c) < 0x20 for c in name):
        return False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value)


class ProgressSender:
    """One process's reports: a non-blocking UDP socket connected to the sidecar, opened once."""

    def __init__(self, lookup: Mapping[str, str]) -> None:
        self._socket: Optional[socket.socket] = None
        self._rank = 0
        self._last_step = 0
        self._last_total: Optional[int] = None
        try:
            env = parse_job_env(lookup)
            port = int(env.sidecar_url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.setblocking(False)
            sock.connect(("127.0.0.1", port))
        except (NcclK8sError, ValueError, IndexError, OSError):
            return
        self._rank = reporting_rank(env, lookup)
        self._socket = sock

    @property
    def enabled(self) -> bool:
        return self._socket is not None

    def report(self, step: int, total: Optional[int], metrics: Mapping[str, float]) -> None:
        if self._send(step, total, metrics, False):
            self._last_step, self._last_total = step, total

    def done(self) -> None:
        self._send(self._last_step, self._last_total, {}, True)

    def _send(self, step: int, total: Optional[int], metrics: Mapping[str, float], done: bool) -> bool:
        """False when it is not a report (a step or total that is not a whole number >= 0)."""
        if self._socket is None or not _whole(step) or (total is not None and not _whole(total)):
            return False
        try:
            self._socket.send(format_report(self._rank, step, total, metrics, done))
        except OSError:
            pass  # a full buffer, no sidecar: the report is lost, which the contract allows
        return True


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_lock = threading.Lock()
_sender: Optional[ProgressSender] = None


def _process_sender() -> ProgressSender:
    global _sender
    if _sender is None:
        with _lock:
            if _sender is None:
                _sender = ProgressSender(os.environ)
    return _sender


def report_progress(step: int, total: Optional[int] = None, **metrics: float) -> None:
    """Reports that this rank reached ``step`` (of ``total``, when known), with up to 8 metrics.

    Report at least as often as the job's failurePolicy.stallTimeoutSeconds (the same step again
    counts as alive); a rank that reported and then goes silent that long ends the attempt.
    """
    try:
        _process_sender().report(step, total, metrics)
    except Exception:  # never let a report break a training step
        pass


def report_progress_done() -> None:
    """The last step again, marked done: the rank stopped stepping on purpose and is no longer
    watched for a stall (evaluation, saving a checkpoint, the end)."""
    try:
        _process_sender().done()
    except Exception:
        pass


__all__ = ["ProgressSender", "format_report", "report_progress", "report_progress_done", "reporting_rank"]
