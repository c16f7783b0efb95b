import socket

import pytest

from nccl_k8s import InvalidArgumentError, address_id, as_id_bytes, bootstrap_address
from nccl_k8s.cupy_comms import cupy_id
from nccl_k8s.torchrun import torchrun_args
from nccl_k8s import InvalidEnvError


def test_address_ids_round_trip_and_differ_by_magic():
    a, b = address_id("10.244.1.2", 29500), address_id("10.244.1.2", 29500)
    assert len(a) == 128 and a != b and a[8:] == b[8:]
    assert bootstrap_address(a) == bootstrap_address(b)
    where = bootstrap_address(a)
    assert (where.family, where.ip, where.port) == (socket.AF_INET, "10.244.1.2", 29500)
    six = bootstrap_address(address_id("fd00::5", 1))
    assert (six.family, six.ip, six.port) == (socket.AF_INET6, "fd00::5", 1)


def test_bad_addresses_and_ids():
    with pytest.raises(InvalidArgumentError):
        address_id("root-0.job.ns.svc", 29500)
    with pytest.raises(InvalidArgumentError):
        address_id("10.0.0.1", 0)
    assert bootstrap_address(bytes(128)) is None
    assert bootstrap_address(b"x") is None


def test_cupy_form_round_trips():
    data = bytes(range(256))[:128][::-1]
    assert as_id_bytes(cupy_id(data)) == data
    assert min(cupy_id(bytes([255] * 128))) == -1


def test_torchrun_args_come_from_the_operators_env():
    env = {"NNODES": "4", "NODE_RANK": "2", "LOCAL_WORLD_SIZE": "1"}
    assert torchrun_args(env, {"MASTER_ADDR": "10.0.0.2", "MASTER_PORT": "29500"}) == [
        "--nnodes=4", "--node-rank=2", "--nproc-per-node=1", "--master-addr=10.0.0.2", "--master-port=29500"]
    with pytest.raises(InvalidEnvError, match="NODE_RANK not set"):
        torchrun_args({"NNODES": "4", "LOCAL_WORLD_SIZE": "1"}, {})
