"""The Python package and the C++ runtime decide alike: both run on the same inputs here (the C++
side through runtime-contract-probe) and must print the same result, messages included."""

import random
import subprocess
from typing import Dict, List

import pytest

from nccl_k8s import InvalidEnvError, default_route_interface, list_interfaces, parse_job_env
from nccl_k8s.socket_ifname import InterfaceAddress, choose_socket_ifname

from conftest import pod_env


def run_probe(probe: str, args: List[str], env: Dict[str, str]) -> List[str]:
    done = subprocess.run([probe, *args], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.splitlines()


def python_job_env(env: Dict[str, str]) -> List[str]:
    try:
        e = parse_job_env(env)
    except InvalidEnvError as err:
        return [f"error={err}"]
    return [f"index={e.index}", f"world_size={e.world_size}", f"gpus_per_pod={e.gpus_per_pod}",
            f"attempt={e.attempt}", f"replicas={e.replicas}", f"init_timeout={int(e.init_timeout)}",
            f"sidecar_url={e.sidecar_url}", f"job_name={e.job_name}", f"pod_ip={e.pod_ip}",
            f"bootstrap_roots={e.bootstrap_roots}", f"bootstrap_roots_set={int(e.bootstrap_roots_set)}",
            f"root_slot={e.root_slot}"]


ENV_CASES = [
    pod_env(0, 1),
    pod_env(3, 7, replicas=4, NCCLJOB_GPUS_PER_POD="8", NCCLJOB_WORLD_SIZE="32", NCCLJOB_POD_IP="10.2.0.4",
            NCCLJOB_INIT_TIMEOUT_SECONDS="60"),
    {},
    pod_env(0, 0),
    pod_env(-1, 1),
    pod_env(0, 1, NCCLJOB_WORLD_SIZE=" 2"),
    pod_env(0, 1, NCCLJOB_WORLD_SIZE="2x"),
    pod_env(0, 1, NCCLJOB_WORLD_SIZE="+2"),
    pod_env(0, 1, NCCLJOB_WORLD_SIZE="99999999999999999999999"),
    pod_env(0, 1, NCCLJOB_GPUS_PER_POD="3", NCCLJOB_WORLD_SIZE="7"),
    pod_env(0, 1, NCCLJOB_REPLICAS="5"),
    pod_env(4, 1, replicas=4),
    pod_env(0, 1, NCCLJOB_SIDECAR_URL="https://127.0.0.1:8471"),
    pod_env(0, 1, NCCLJOB_SIDECAR_URL=""),
    pod_env(0, 1, NCCLJOB_INIT_TIMEOUT_SECONDS="0"),
    pod_env(0, 1, NCCLJOB_INIT_TIMEOUT_SECONDS="604801"),
    pod_env(0, 1, NCCLJOB_GPUS_PER_POD="1025", NCCLJOB_ATTEMPT="1048577"),
    pod_env(2, 1, replicas=4, NCCLJOB_BOOTSTRAP_ROOTS="2"),
    pod_env(3, 1, replicas=4, NCCLJOB_BOOTSTRAP_ROOTS="2"),
    pod_env(0, 1, replicas=1, NCCLJOB_BOOTSTRAP_ROOTS="1"),
    pod_env(1, 1, replicas=3, NCCLJOB_GPUS_PER_POD="2", NCCLJOB_WORLD_SIZE="6", NCCLJOB_BOOTSTRAP_ROOTS="2"),
    pod_env(0, 1, replicas=2, NCCLJOB_BOOTSTRAP_ROOTS="3"),
    pod_env(0, 1, replicas=2, NCCLJOB_BOOTSTRAP_ROOTS="0"),
    pod_env(0, 1, replicas=2, NCCLJOB_BOOTSTRAP_ROOTS="two"),
]


@pytest.mark.parametrize("env", ENV_CASES, ids=range(len(ENV_CASES)))
def test_job_env_agrees(contract_probe, env):
    assert python_job_env(env) == run_probe(contract_probe, ["job-env"], env)


def python_ifname(user, pod_ip, interfaces, default_route) -> List[str]:
    choice = choose_socket_ifname(user, pod_ip, interfaces, default_route)
    return [f"value={choice.value}", f"source={choice.source}", *(f"warning={w}" for w in choice.warnings)]


def probe_args(user, pod_ip, interfaces, default_route) -> List[str]:
    args = ["ifname"]
    if user is not None:
        args += ["--user", user]
    args += ["--pod-ip", pod_ip, "--default-route", default_route]
    return args + [f"{i.name}={i.ip}" for i in interfaces]


def random_cases(count: int, seed: int = 17):
    rng = random.Random(seed)
    names = ["eth0", "eth1", "ib0", "lo", "net1", "bond0"]
    ips = ["10.0.0.2", "10.0.0.3", "fd00::2", "127.0.0.1", "192.168.1.9"]
    users = [None, "", "eth", "=eth0", "^lo", "^=lo,docker", "ib,eth", "=", "^", ",,", "=ib0,net"]
    for _ in range(count):
        interfaces = [InterfaceAddress(rng.choice(names), rng.choice(ips)) for _ in range(rng.randint(0, 4))]
        yield (rng.choice(users), rng.choice(["", *ips]), interfaces, rng.choice(["", *names]))


@pytest.mark.parametrize("case", list(random_cases(150)), ids=range(150))
def test_interface_choice_agrees(contract_probe, case):
    assert python_ifname(*case) == run_probe(contract_probe, probe_args(*case), {})


def test_both_see_the_same_interfaces_and_default_route(contract_probe):
    lines = run_probe(contract_probe, ["system"], {})
    cpp_interfaces = [line.split("=", 1)[1] for line in lines if line.startswith("interface=")]
    assert [f"{i.name} {i.ip}" for i in list_interfaces()] == cpp_interfaces
    assert f"default_route={default_route_interface()}" in lines


def python_roots(roots: int, replicas: int, per_pod: int) -> List[str]:
    from nccl_k8s.bootstrap_roots import root_pods, root_slot
    pods = "".join(f"{p}," for p in root_pods(roots, replicas, per_pod))
    slots = "".join(f"{root_slot(i, roots, replicas, per_pod)}," for i in range(replicas))
    return [f"pods={pods}", f"slots={slots}"]


ROOT_CASES = [(1, 1, 1), (1, 8, 8), (2, 4, 1), (2, 3, 2), (3, 10, 1), (4, 4, 8), (7, 100, 3), (16, 1000, 8),
              (5, 7, 4), (64, 64, 1)]


@pytest.mark.parametrize("case", ROOT_CASES, ids=[f"{r}of{n}x{g}" for r, n, g in ROOT_CASES])
def test_bootstrap_roots_agree(contract_probe, case):
    roots, replicas, per_pod = case
    expected = python_roots(roots, replicas, per_pod)
    assert expected == run_probe(contract_probe, ["roots", str(roots), str(replicas), str(per_pod)], {})
    # Distinct, increasing root pods: roots <= replicas gives every id its own pod.
    pods = [int(p) for p in expected[0][len("pods="):].split(",") if p]
    assert pods == sorted(set(pods)) and len(pods) == roots and pods[0] == 0


def python_id_answer(body: bytes, attempt: int, expected: int) -> List[str]:
    from nccl_k8s.errors import NcclK8sError
    from nccl_k8s.sidecar import ids_of_answer
    try:
        return [f"id={i.hex()}" for i in ids_of_answer(body, attempt, expected)]
    except NcclK8sError as err:
        return [f"error={err}"]


def _b64(data: bytes) -> str:
    import base64
    return base64.b64encode(data).decode()


ID_A, ID_B = bytes(range(128)), bytes(range(128, 256))
ANSWER_CASES = [
    ({"ids": [_b64(ID_A)], "id": _b64(ID_A), "attempt": 2}, 2, 1),
    ({"ids": [_b64(ID_A), _b64(ID_B)], "attempt": 2}, 2, 2),
    ({"ids": [_b64(ID_A), _b64(ID_B)], "attempt": 2}, 2, 1),
    ({"id": _b64(ID_A), "attempt": 2}, 2, 1),
    ({"id": _b64(ID_A), "attempt": 2}, 2, 2),
    ({"ids": [_b64(ID_A), _b64(ID_B)], "attempt": 1}, 2, 2),
    ({"ids": [_b64(ID_A), _b64(ID_B[:90])], "attempt": 2}, 2, 2),
    ({"ids": [_b64(ID_A)[:-2] + "B="], "attempt": 2}, 2, 1),
    ({"ids": [], "attempt": 2}, 2, 1),
    ({"attempt": 2}, 2, 1),
    ({"ids": [_b64(ID_A)]}, 2, 1),
]


@pytest.mark.parametrize("case", ANSWER_CASES, ids=range(len(ANSWER_CASES)))
def test_id_answer_readers_agree(contract_probe, case):
    import json
    doc, attempt, expected = case
    body = json.dumps(doc).encode()
    done = subprocess.run([contract_probe, "id-answer", str(attempt), str(expected)], input=body,
                          capture_output=True, timeout=30)
    assert done.returncode in (0, 1), done.stderr
    assert python_id_answer(body, attempt, expected) == done.stdout.decode().splitlines()
