from nccl_k8s import InvalidEnvError, parse_job_env
import pytest

from conftest import pod_env


def test_a_full_contract_is_read():
    env = parse_job_env(pod_env(1, 3, replicas=4, NCCLJOB_GPUS_PER_POD="2", NCCLJOB_WORLD_SIZE="8",
                                NCCLJOB_INIT_TIMEOUT_SECONDS="42", NCCLJOB_POD_IP="10.0.0.7"))
    assert (env.index, env.replicas, env.world_size, env.gpus_per_pod, env.attempt) == (1, 4, 8, 2, 3)
    assert (env.init_timeout, env.pod_ip, env.job_name) == (42.0, "10.0.0.7", "py")
    assert (env.ranks_per_pod, env.first_rank, env.is_root) == (2, 2, False)


def test_cpu_only_pods_have_one_rank_each_and_the_default_timeout():
    env = parse_job_env(pod_env(0, 1, replicas=3))
    assert (env.ranks_per_pod, env.first_rank, env.is_root, env.init_timeout) == (1, 0, True, 300.0)


def test_every_problem_is_named_in_one_error():
    with pytest.raises(InvalidEnvError) as err:
        parse_job_env({"NCCLJOB_INDEX": "+1", "NCCLJOB_SIDECAR_URL": "https://x"})
    text = str(err.value)
    assert text.startswith("invalid env: NCCLJOB_INDEX='+1' is not an integer in [0, 1048576]; ")
    for name in ("NCCLJOB_WORLD_SIZE is not set", "NCCLJOB_GPUS_PER_POD is not set", "NCCLJOB_ATTEMPT is not set",
                 "NCCLJOB_SIDECAR_URL='https://x' is not an http:// URL"):
        assert name in text
    assert text.endswith("(see docs/contracts.md, 'Env injected').")


def test_cross_checks_world_size_replicas_and_index():
    with pytest.raises(InvalidEnvError, match=r"NCCLJOB_WORLD_SIZE=5 is not a multiple of the ranks per pod \(2\)"):
        parse_job_env(pod_env(0, 1, NCCLJOB_GPUS_PER_POD="2", NCCLJOB_WORLD_SIZE="5"))
    with pytest.raises(InvalidEnvError, match=r"NCCLJOB_REPLICAS=3 disagrees with"):
        parse_job_env(pod_env(0, 1, replicas=2, NCCLJOB_REPLICAS="3"))
    with pytest.raises(InvalidEnvError, match=r"NCCLJOB_INDEX=2 is not below the number of pods \(2\)"):
        parse_job_env(pod_env(2, 1, replicas=2))


def test_bootstrap_roots_pick_the_root_pods():
    # 4 pods, 2 roots: pods 0 and 2 make the ids, in that order.
    slots = [parse_job_env(pod_env(i, 1, replicas=4, NCCLJOB_BOOTSTRAP_ROOTS="2")).root_slot for i in range(4)]
    assert slots == [0, -1, 1, -1]
    env = parse_job_env(pod_env(1, 1, replicas=4))
    assert (env.bootstrap_roots, env.bootstrap_roots_set, env.is_root) == (1, False, False)
    with pytest.raises(InvalidEnvError, match=r"NCCLJOB_BOOTSTRAP_ROOTS=5 is more than the number of pods \(4\)"):
        parse_job_env(pod_env(0, 1, replicas=4, NCCLJOB_BOOTSTRAP_ROOTS="5"))
