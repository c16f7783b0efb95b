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
            f"sidecar_url={e.sidecar_url}", f"job_name={e.job_name}", f"pod_ip={e.pod_ip}"]


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
