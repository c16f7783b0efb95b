"""unique_id() and the PyTorch address against real nccl-sidecar processes (--standalone: the
root serves its POSTed id, a worker long-polls the root's sidecar, as on the GPU machine)."""

import socket
import threading
import time

import pytest

import nccl_k8s
from nccl_k8s import (DeadlineExceededError, InvalidArgumentError, SidecarUnavailableError, StaleAttemptError,
                      bootstrap_address, parse_job_env, unique_id)
from nccl_k8s.pytorch import master_address, process_group_env

from conftest import pod_env

ID = bytes(range(128))


def env_for(index, attempt, sidecar, **extra):
    return parse_job_env(pod_env(index, attempt, url=sidecar.url, **extra))


def test_root_posts_and_the_worker_gets_the_same_bytes(sidecars):
    root = sidecars(0, 1)
    worker = sidecars(1, 1, peer_url=root.url)
    got = {}
    waiter = threading.Thread(target=lambda: got.update(id=unique_id(env=env_for(1, 1, worker), timeout=30)))
    waiter.start()  # the worker asks first and long-polls until the root posts
    assert unique_id(lambda: ID, env=env_for(0, 1, root), timeout=30) == ID
    waiter.join(30)
    assert got["id"] == ID
    # cupy.cuda.nccl.get_unique_id() hands out 128 signed chars; they are posted as the same bytes
    assert unique_id(lambda: nccl_k8s.cupy_comms.cupy_id(ID), env=env_for(0, 1, root), timeout=10) == ID


def test_a_worker_of_an_older_attempt_is_stale(sidecars):
    root = sidecars(0, 2)
    worker = sidecars(1, 1, peer_url=root.url)
    unique_id(lambda: ID, env=env_for(0, 2, root), timeout=30)
    with pytest.raises(StaleAttemptError, match=r"attempt 1 is over \(HTTP 410.*this pod is stale and should exit"):
        unique_id(env=env_for(1, 1, worker), timeout=30)


def test_an_id_for_another_attempt_is_refused_by_the_root_sidecar(sidecars):
    root = sidecars(0, 2)
    with pytest.raises(SidecarUnavailableError, match=r"refused this pod's id for attempt 1: HTTP 409"):
        nccl_k8s.sidecar.post_id(root.url, ID, 1, time.monotonic() + 10)


def test_the_sidecars_attempt_wins_over_the_envs(sidecars, caplog):
    """After an in-place restart the pod's sidecar serves a later attempt than the NCCLJOB_ATTEMPT
    the pod was created with: the package takes the sidecar's (GET /v1/info), posts the root's id
    for it and accepts the id of it (with the env's, the POST would be refused 409 and the
    answer's attempt refused as stale)."""
    root = sidecars(0, 3)
    worker = sidecars(1, 3, peer_url=root.url)
    assert nccl_k8s.served_attempt(env=env_for(1, 1, worker), timeout=10) == 3
    got = {}
    waiter = threading.Thread(target=lambda: got.update(id=unique_id(env=env_for(1, 1, worker), timeout=30)))
    waiter.start()
    with caplog.at_level("INFO", logger="nccl_k8s"):
        assert unique_id(lambda: ID, env=env_for(0, 1, root), timeout=30) == ID
    waiter.join(30)
    assert got["id"] == ID
    assert "attempt 3 learnt from the sidecar (NCCLJOB_ATTEMPT=1)" in caplog.text
    assert "root id handed to the sidecar for attempt 3" in caplog.text


def test_the_attempt_is_asked_again_until_the_sidecar_answers():
    """An in-place sidecar binds its API only once it knows its attempt, and a starting one may be
    closed or busy: a request without an answer and a 5xx are asked again."""
    info = (b'{"attempt":7,"bootstrapRoots":1,"gpusPerPod":0,"index":1,"job":"py","namespace":"n",'
            b'"replicas":2,"root":false,"worldSize":2}')
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)

        def sidecar():
            closed, _ = listener.accept()
            closed.close()
            for status, body in ((b"503 Service Unavailable", b'{"error":"busy"}'), (b"200 OK", info)):
                conn, _ = listener.accept()
                with conn:
                    _read_request_body(conn)
                    conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nContent-Length: " +
                                 str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)

        server = threading.Thread(target=sidecar)
        server.start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        assert nccl_k8s.sidecar.fetch_attempt(url, time.monotonic() + 10) == 7
        server.join(10)


@pytest.mark.parametrize("status,body,says", [
    (b"404 Not Found", b'{"error":"no such path"}', "refused GET /v1/info: HTTP 404: no such path"),
    (b"200 OK", b'{"job":"j"}', "answer has no attempt number"),
    (b"200 OK", b'{"attempt":true}', "answer has no attempt number"),
])
def test_an_attempt_answer_it_cannot_use_is_an_error(status, body, says):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)

        def sidecar():
            conn, _ = listener.accept()
            with conn:
                _read_request_body(conn)
                conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nContent-Length: " +
                             str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)

        server = threading.Thread(target=sidecar)
        server.start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(SidecarUnavailableError, match=says):
            nccl_k8s.sidecar.fetch_attempt(url, time.monotonic() + 10)
        server.join(10)


def test_no_root_id_ends_at_the_deadline(sidecars):
    root = sidecars(0, 1)
    worker = sidecars(1, 1, peer_url=root.url)
    started = time.monotonic()
    with pytest.raises(DeadlineExceededError, match=r"no id for attempt 1 from the sidecar at http://127.0.0.1:\d+ "
                                                    r"before the init deadline"):
        unique_id(env=env_for(1, 1, worker), timeout=2.5)
    assert 2.0 < time.monotonic() - started < 6


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nobody_listening_ends_at_the_deadline_naming_the_last_error():
    env = parse_job_env(pod_env(1, 1, url=f"http://127.0.0.1:{free_port()}"))
    with pytest.raises(DeadlineExceededError, match=r"last error: sidecar at http://127.0.0.1:\d+: cannot connect"):
        unique_id(env=env, timeout=1)


def _read_request_body(conn):
    raw = b""
    while b"\r\n\r\n" not in raw or len(raw) < raw.index(b"\r\n\r\n") + 4 + _content_length(raw):
        chunk = conn.recv(4096)
        if not chunk:
            return b""
        raw += chunk
    head_end = raw.index(b"\r\n\r\n") + 4
    return raw[head_end:head_end + _content_length(raw)]


def _content_length(raw):
    for line in raw.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 0


def test_the_root_posts_the_same_id_again_when_its_sidecar_dies_before_answering():
    """The root gap: a root sidecar answers the POST only once the id is on its pod, so one
    killed before that closes the connection unanswered; the client posts the same id again
    to the sidecar the kubelet restarts on the same port."""
    bodies = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)

        def sidecar():
            killed, _ = listener.accept()
            with killed:
                bodies.append(_read_request_body(killed))
            restarted, _ = listener.accept()
            with restarted:
                bodies.append(_read_request_body(restarted))
                restarted.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n"
                                  b"Connection: close\r\n\r\n{\"attempt\":4}")

        server = threading.Thread(target=sidecar)
        server.start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        nccl_k8s.sidecar.post_id(url, ID, 4, time.monotonic() + 10)
        server.join(10)
    assert len(bodies) == 2 and bodies[0]
    assert bodies[1] == bodies[0]  # the same id and attempt again
    assert b'"attempt": 4' in bodies[0]


def test_the_root_needs_create_and_128_bytes():
    env = parse_job_env(pod_env(0, 1))
    with pytest.raises(InvalidArgumentError, match="pod 0 makes the id: pass create="):
        unique_id(env=env, timeout=1)
    with pytest.raises(InvalidArgumentError, match=r"exactly 128 bytes \(ncclUniqueId\), got 5"):
        unique_id(lambda: b"short", env=env, timeout=1)


@pytest.mark.parametrize("ip", ["10.244.0.7", "fd00::1:7"])
def test_pytorch_ranks_learn_the_roots_ip_from_the_id(sidecars, ip, monkeypatch):
    monkeypatch.setenv("MASTER_PORT", "29555")
    root = sidecars(0, 1)
    worker = sidecars(1, 1, peer_url=root.url)
    assert master_address(env_for(0, 1, root, NCCLJOB_POD_IP=ip), timeout=30) == {
        "MASTER_ADDR": ip, "MASTER_PORT": "29555"}
    got = process_group_env(env_for(1, 1, worker), timeout=30)
    assert (got["MASTER_ADDR"], got["MASTER_PORT"], got["RANK"], got["WORLD_SIZE"]) == (ip, "29555", "1", "2")


def test_a_real_nccl_root_id_from_the_runtime_reaches_python(sidecars, id_tool, tmp_path):
    """nccl-k8s-id (the C++ runtime, ncclGetUniqueId) is the root; Python reads the id it posted
    and decodes NCCL's bootstrap address from it, the same address the runtime logged."""
    import subprocess
    root = sidecars(0, 1)
    worker = sidecars(1, 1, peer_url=root.url)
    done = subprocess.run([id_tool, "--timeout", "30"], env=pod_env(0, 1, url=root.url, NCCL_K8S_LOG_LEVEL="info"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    data = unique_id(env=env_for(1, 1, worker), timeout=30)
    assert data.hex() == done.stdout.strip()
    where = bootstrap_address(data)
    assert where is not None and where.port > 0
    assert f"{where.ip}:{where.port}" in done.stderr  # the runtime's "root id created ... bootstrap" line


def test_one_id_is_refused_for_a_job_of_several_roots():
    from nccl_k8s import InvalidArgumentError, parse_job_env, unique_id
    env = parse_job_env(pod_env(0, 1, replicas=4, NCCLJOB_BOOTSTRAP_ROOTS="2"))
    with pytest.raises(InvalidArgumentError, match="bootstraps from 2 roots"):
        unique_id(lambda: bytes(128), env=env, timeout=1)
