"""Tests of the kubelet's restart in place as the scale bench plays it (kubelet_inplace.py), and of
the bench's bookkeeping of pods that serve the next attempt without being made again."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubelet_inplace as k  # noqa: E402
from track import OPERATOR, Timeline  # noqa: E402

NOW = "2026-12-05T03:00:00Z"


def running_pod(uid="u1", attempt=1, index=0, restarts_before="0", restarts=0):
    """A pod of the operator made to restart in place, running as KWOK's pod-running stage leaves it."""
    running = {"running": {"startedAt": NOW}}
    return {"metadata": {"uid": uid, "name": f"j-{index}",
                         "labels": {OPERATOR["job"]: "j", OPERATOR["attempt"]: str(attempt),
                                    OPERATOR["index"]: str(index)},
                         "annotations": {"nccl.dev/restarts-before-attempt": restarts_before}},
            "spec": {"nodeName": "n1"},
            "status": {"phase": "Running",
                       "conditions": [{"type": "PodScheduled", "status": "True"},
                                      {"type": "Ready", "status": "True"}],
                       "initContainerStatuses": [{"name": "nccl-sidecar", "restartCount": restarts, "ready": True,
                                                  "started": True, "state": dict(running)}],
                       "containerStatuses": [{"name": "trainer", "restartCount": restarts, "ready": True,
                                              "started": True, "state": dict(running)}]}}


def play(pod, container, code):
    """Applies the five writes in turn (as the API server would merge each status); returns them."""
    seen = []
    for write in k.writes(container, code):
        pod = dict(pod, status=write(pod))
        seen.append(pod)
    return seen


def condition(pod, kind):
    return next((c["status"] for c in pod["status"]["conditions"] if c["type"] == kind), None)


def test_one_restart_is_five_writes_and_counts_every_container_once():
    seen = play(running_pod(), "trainer", 1)
    assert len(seen) == len(k.STEPS) == 5
    exited, removed, sidecar, trainer, ready = seen
    assert exited["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1
    assert condition(exited, k.CONDITION) == "True" and condition(exited, "Ready") == "False"
    assert removed["status"]["phase"] == "Pending" and condition(removed, k.CONDITION) == "False"
    for cs in removed["status"]["containerStatuses"] + removed["status"]["initContainerStatuses"]:
        assert cs["restartCount"] == 1
        assert cs["state"]["waiting"]["reason"] == k.RESTARTING
        assert cs["lastState"]["terminated"]["exitCode"] == k.KILLED_CODE
    assert "running" in sidecar["status"]["initContainerStatuses"][0]["state"]
    assert "waiting" in sidecar["status"]["containerStatuses"][0]["state"]
    assert trainer["status"]["phase"] == "Running" and condition(trainer, "Ready") == "False"
    assert condition(ready, "Ready") == "True" and condition(ready, "PodScheduled") == "True"
    assert [c["restartCount"] for c in ready["status"]["containerStatuses"]] == [1]


def test_the_sidecars_exit_restarts_the_pod_and_leaves_the_trainers_code_alone():
    exited = play(running_pod(), "nccl-sidecar", 85)[0]
    assert exited["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 85
    assert "running" in exited["status"]["containerStatuses"][0]["state"]
    assert not k.trainer_failed(exited, "trainer")


def test_a_pod_serves_its_attempt_once_its_trainer_restarted_as_often_as_the_operator_counts():
    moved = running_pod(attempt=2, restarts_before="1")
    assert not k.restarted_for(moved, "trainer")  # still the last attempt's trainer
    steps = play(moved, "nccl-sidecar", 85)
    assert [k.restarted_for(p, "trainer") for p in steps] == [False, False, False, True, True]
    assert k.restarted_for(running_pod(), "trainer")  # the first attempt: no restart owed


def test_the_pod_that_restarted_during_the_attempt_that_ended_does_not_exit_again():
    restarted = {("j", "2"): 1, ("j", "0"): 2}
    assert k.sidecar_exits(4, 2, "j", restarted) == ["0", "1", "3"]
    assert k.sidecar_exits(4, 3, "j", restarted) == ["1", "2", "3"]
    assert k.sidecar_exits(2, 2, "other", restarted) == ["0", "1"]


def test_timeline_counts_a_pod_moved_in_place_for_its_next_attempt():
    tl = Timeline(OPERATOR, lambda job: 1)
    tl.on_pod("ADDED", running_pod(), 1.0)
    assert tl.running_at[("j", 1)] == 1.0 and tl.take_roots() == [("j", 1, "j-0")]
    failed = play(running_pod(), "trainer", 1)
    tl.on_pod("MODIFIED", failed[0], 2.0)
    assert tl.failed_at[("j", 1)] == 2.0
    moved = running_pod(attempt=2, restarts_before="1")
    tl.on_pod("MODIFIED", moved, 3.0)  # same uid, the operator's label patch: exists, not serving
    assert tl.exist_at[("j", 2)] == 3.0 and tl.bound_at[("j", 2)] == 3.0
    assert ("j", 2) not in tl.running_at and tl.take_roots() == []
    for t, step in zip((4.0, 5.0, 6.0, 7.0), play(moved, "nccl-sidecar", 85)):
        tl.on_pod("MODIFIED", step, t)
    assert tl.running_at[("j", 2)] == 7.0  # the trainer write (the fourth)
    assert tl.take_roots() == [("j", 2, "j-0")]
    assert ("j", 2) not in tl.failed_at  # the restart's kill is no failure
