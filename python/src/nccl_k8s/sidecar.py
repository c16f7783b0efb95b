"""The trainer's side of the sidecar's id API (docs/contracts.md, "The sidecar's HTTP API").

The same protocol, retries and messages as the C++ runtime (runtime/src/sidecar_client.cc): every
pod first asks GET /v1/info for the attempt it serves (after an in-place restart it is past
NCCLJOB_ATTEMPT); the root POSTs the id with that attempt; everyone else long-polls GET /v1/id, where 204 asks again,
410 means a later attempt exists, and 5xx or a request without an answer (refused, reset) is
retried with backoff until the deadline: the sidecar may start after the trainer, and a root
sidecar answers the POST only once the id is on its pod, so one killed before that gets the same
id again from us after its restart.
"""

from __future__ import annotations

import base64
import http.client
import json
import time
from dataclasses import dataclass
from typing import List, Optional, Tuple
from urllib.parse import urlsplit

from .errors import (DeadlineExceededError, InvalidArgumentError, InvalidEnvError, SidecarUnavailableError,
                     StaleAttemptError)
from .unique_id import UNIQUE_ID_BYTES

MAX_POLL_SECONDS = 30  # the longest single long-poll asked of the sidecar
_FIRST_BACKOFF = 0.05
_MAX_BACKOFF = 1.0


@dataclass(frozen=True)
class _Url:
    host: str
    port: int
    base_path: str


def _parse_url(url: str) -> _Url:
    if not url.startswith("http://"):
        raise InvalidArgumentError(f"URL '{url}' does not start with http://")
    parts = urlsplit(url)
    try:
        port = parts.port or 80
    except ValueError as err:
        raise InvalidArgumentError(f"URL '{url}' has a bad port") from err
    if not parts.hostname:
        raise InvalidArgumentError("URL has no host")
    return _Url(parts.hostname, port, parts.path.rstrip("/"))


def _sidecar_url(url: str) -> _Url:
    try:
        return _parse_url(url)
    except InvalidArgumentError as err:
        raise InvalidEnvError(f"NCCLJOB_SIDECAR_URL: {err.message}") from err


class _Unreachable(Exception):
    """A request that got no HTTP answer (refused, reset, timed out): retried."""


def _request(url: _Url, method: str, path: str, body: Optional[bytes], content_type: str,
             deadline: float) -> Tuple[int, bytes]:
    where = f"sidecar at http://{url.host}:{url.port}"
    left = deadline - time.monotonic()
    if left <= 0:
        raise _Unreachable(f"{where}: no answer before the deadline")
    conn = http.client.HTTPConnection(url.host, url.port, timeout=left)
    try:
        headers = {"Connection": "close", "User-Agent": "nccl-k8s-python"}
        if content_type:
            headers["Content-Type"] = content_type
        conn.request(method, url.base_path + path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read(1 << 20)
    except ConnectionRefusedError as err:
        raise _Unreachable(f"{where}: cannot connect: {err.strerror or err}") from err
    except TimeoutError as err:
        raise _Unreachable(f"{where}: no answer before the deadline") from err
    except (OSError, http.client.HTTPException) as err:
        raise _Unreachable(f"{where}: {err}") from err
    finally:
        conn.close()


def _error_text(status: int, body: bytes) -> str:
    message = None
    try:
        doc = json.loads(body)
        if isinstance(doc, dict):
            message = doc.get("error") or doc.get("message")
    except ValueError:
        pass
    return f"HTTP {status}" + (f": {message}" if isinstance(message, str) else "")


def _backoff(backoff: float, deadline: float) -> float:
    time.sleep(max(0.0, min(backoff, deadline - time.monotonic())))
    return min(backoff * 2, _MAX_BACKOFF)


def _deadline_passed(what: str, last_error: str) -> DeadlineExceededError:
    return DeadlineExceededError(what + " before the init deadline (NCCLJOB_INIT_TIMEOUT_SECONDS)" +
                                 (f"; last error: {last_error}" if last_error else ""))


def fetch_attempt(sidecar_url: str, deadline: float) -> int:
    """The attempt this pod serves: the ``attempt`` of the sidecar's GET /v1/info. After the kubelet
    restarted the pod's containers in place for a later attempt it is past NCCLJOB_ATTEMPT (the
    attempt the pod was created for). Asked again while the sidecar does not answer (it is starting,
    or still waits to learn its attempt) or answers 5xx, until ``deadline``."""
    url = _sidecar_url(sidecar_url)
    backoff, last_error = _FIRST_BACKOFF, ""
    while time.monotonic() < deadline:
        try:
            status, answer = _request(url, "GET", "/v1/info", None, "", deadline)
        except _Unreachable as err:
            last_error = str(err)
            backoff = _backoff(backoff, deadline)
            continue
        if status >= 500:
            last_error = _error_text(status, answer)
            backoff = _backoff(backoff, deadline)
            continue
        if status != 200:
            raise SidecarUnavailableError(f"the sidecar refused GET /v1/info: {_error_text(status, answer)}")
        try:
            doc = json.loads(answer)
        except ValueError:
            doc = None
        attempt = doc.get("attempt") if isinstance(doc, dict) else None
        if not isinstance(attempt, int) or isinstance(attempt, bool) or not 1 <= attempt <= 2**31 - 1:
            raise SidecarUnavailableError("the sidecar's /v1/info answer has no attempt number")
        return attempt
    raise _deadline_passed(f"could not learn this pod's attempt from the sidecar at {sidecar_url}", last_error)


def post_id(sidecar_url: str, unique_id: bytes, attempt: int, deadline: float) -> None:
    """Root: hands ``unique_id`` of ``attempt`` to the sidecar (``deadline`` on time.monotonic())."""
    url = _sidecar_url(sidecar_url)
    body = json.dumps({"id": base64.b64encode(unique_id).decode(), "attempt": attempt}).encode()
    backoff, last_error = _FIRST_BACKOFF, ""
    while time.monotonic() < deadline:
        try:
            status, answer = _request(url, "POST", "/v1/id", body, "application/json", deadline)
        except _Unreachable as err:
            last_error = str(err)
            backoff = _backoff(backoff, deadline)
            continue
        if status == 200:
            return
        if status >= 500:
            last_error = _error_text(status, answer)
            backoff = _backoff(backoff, deadline)
            continue
        raise SidecarUnavailableError(f"the sidecar refused this pod's id for attempt {attempt}: "
                                      f"{_error_text(status, answer)}")
    raise _deadline_passed(f"could not hand the id to the sidecar at {sidecar_url}", last_error)


def ids_of_answer(answer: bytes, attempt: int, expected_ids: int = 1) -> List[bytes]:
    """The ids of a 200 answer of GET /v1/id: its ``ids`` list, or the ``id`` of a sidecar that
    predates the list. Checked like the runtime's ParseIdAnswer, with its messages."""
    texts: Optional[List[str]] = None
    got_attempt = None
    try:
        doc = json.loads(answer)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        raw_attempt = doc.get("attempt")
        got_attempt = raw_attempt if isinstance(raw_attempt, int) and not isinstance(raw_attempt, bool) else None
        listed = doc.get("ids")
        if isinstance(listed, list) and all(isinstance(t, str) for t in listed):
            texts = list(listed)
        elif isinstance(doc.get("id"), str):
            texts = [doc["id"]]
    if texts is None or got_attempt is None:
        raise SidecarUnavailableError("the sidecar's answer has no id or attempt field")
    if got_attempt != attempt:
        raise StaleAttemptError(f"the sidecar served the id of attempt {got_attempt}, this pod is attempt "
                                f"{attempt}; refusing to use it")
    if len(texts) != expected_ids:
        raise SidecarUnavailableError(f"the sidecar served {len(texts)} id(s), this job has {expected_ids} "
                                      "bootstrap root(s) (NCCLJOB_BOOTSTRAP_ROOTS); refusing to use them")
    ids = []
    for text in texts:
        try:
            data = base64.b64decode(text, validate=True)
        except ValueError:
            data = b""
        # One text per id, as the runtime's strict decoder: padding bits must be zero.
        if len(data) != UNIQUE_ID_BYTES or base64.b64encode(data).decode() != text:
            raise SidecarUnavailableError("the sidecar's id is not 128 bytes of base64")
        ids.append(data)
    return ids


def fetch_id(sidecar_url: str, attempt: int, deadline: float) -> bytes:
    """The one id of a job with one bootstrap root (:func:`fetch_ids` with one expected)."""
    return fetch_ids(sidecar_url, attempt, 1, deadline)[0]


def fetch_ids(sidecar_url: str, attempt: int, expected_ids: int, deadline: float) -> List[bytes]:
    """Long-polls until the sidecar serves the ids of ``attempt`` (``expected_ids`` of them)."""
    url = _sidecar_url(sidecar_url)
    backoff, last_error = _FIRST_BACKOFF, ""
    while time.monotonic() < deadline:
        # Ask the sidecar to answer a little before our deadline so the reply still arrives in time.
        poll_s = min(max(int(deadline - time.monotonic()) - 1, 1), MAX_POLL_SECONDS)
        try:
            status, answer = _request(url, "GET", f"/v1/id?timeout={poll_s}", None, "", deadline)
        except _Unreachable as err:
            last_error = str(err)
            backoff = _backoff(backoff, deadline)
            continue
        backoff = _FIRST_BACKOFF
        if status == 200:
            return ids_of_answer(answer, attempt, expected_ids)
        if status == 204:
            continue  # the long-poll timed out: ask again
        if status == 410:
            raise StaleAttemptError(f"attempt {attempt} is over ({_error_text(status, answer)}); "
                                    "this pod is stale and should exit")
        last_error = _error_text(status, answer)
        if status >= 500:
            backoff = _backoff(backoff, deadline)
            continue
        raise SidecarUnavailableError(f"the sidecar refused the id request: {last_error}")
    raise _deadline_passed(f"no id for attempt {attempt} from the sidecar at {sidecar_url}", last_error)
