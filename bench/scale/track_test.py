"""Unit tests of the scale bench's bookkeeping (python3 -m pytest bench/scale/track_test.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from track import JOBSET, OPERATOR, ProgressFollow, Timeline, percentile  # noqa: E402


def pod(uid, job, attempt, index, phase="Pending", marks=OPERATOR, name=None):
    labels = {marks["job"]: job, marks["attempt"]: str(attempt), marks["index"]: str(index)}
    return {"metadata": {"uid": uid, "name": name or f"{job}-{index}", "labels": labels}, "status": {"phase": phase}}


def test_percentile_nearest_rank():
    assert percentile([], 50) is None
    assert percentile([3, 1, 2], 50) == 2
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile([5], 99) == 5


def test_attempt_times_when_the_last_pod_arrives_and_runs():
    tl = Timeline(OPERATOR, lambda job: 2)
    tl.on_pod("ADDED", pod("a", "j", 1, 0), 1.0)
    assert ("j", 1) not in tl.exist_at
    tl.on_pod("ADDED", pod("b", "j", 1, 1), 2.0)
    tl.on_pod("MODIFIED", pod("b", "j", 1, 1), 2.5)  # seen again: counted once
    assert tl.exist_at[("j", 1)] == 2.0
    bound = pod("a", "j", 1, 0)
    bound["spec"] = {"nodeName": "n1"}
    tl.on_pod("MODIFIED", bound, 2.7)
    tl.on_pod("MODIFIED", pod("a", "j", 1, 0, "Running"), 3.0)
    assert ("j", 1) not in tl.bound_at
    assert tl.count_bound[("j", 1)] == 1
    assert tl.take_roots() == [("j", 1, "j-0")]
    assert tl.take_roots() == []
    tl.on_pod("MODIFIED", pod("b", "j", 1, 1, "Succeeded"), 4.0)  # ran, even if Running was missed
    assert tl.running_at[("j", 1)] == 4.0
    assert ("j", 1) not in tl.succeeded_at


def test_a_failed_pod_and_the_next_attempt_with_the_same_names():
    tl = Timeline(OPERATOR, lambda job: 1)
    tl.on_pod("ADDED", pod("a", "j", 1, 0, "Running"), 1.0)
    tl.on_pod("MODIFIED", pod("a", "j", 1, 0, "Failed"), 2.0)
    tl.on_pod("MODIFIED", pod("a", "j", 1, 0, "Failed"), 3.0)
    assert tl.failed_at[("j", 1)] == 2.0
    tl.on_pod("DELETED", pod("a", "j", 1, 0, "Failed"), 3.5)
    tl.on_pod("ADDED", pod("b", "j", 2, 0), 4.0)  # same name, new uid, next attempt
    assert tl.exist_at[("j", 2)] == 4.0
    assert tl.names[("j", 2, "0")] == "j-0"


def test_jobset_attempts_count_from_zero():
    tl = Timeline(JOBSET, lambda job: 1)
    tl.on_pod("ADDED", pod("a", "js", 0, 0, marks=JOBSET, name="js-workers-0-0-x"), 1.0)
    assert tl.exist_at[("js", 1)] == 1.0
    assert tl.names[("js", 1, "0")] == "js-workers-0-0-x"


def test_id_published_once_per_attempt_from_the_configmap():
    tl = Timeline(OPERATOR, lambda job: 1)
    cm = {"metadata": {"labels": {OPERATOR["job"]: "j"}}, "data": {"attempt": "1"}}
    tl.on_configmap("ADDED", cm, 1.0)
    assert tl.id_at == {}
    cm["data"]["uniqueId"] = "abc"
    tl.on_configmap("MODIFIED", cm, 2.0)
    tl.on_configmap("MODIFIED", cm, 3.0)
    assert tl.id_at == {("j", 1): 2.0}


def test_progress_followed_when_the_status_shows_the_step_or_a_later_one():
    f = ProgressFollow()
    job = {"status": {"progress": {"attempt": 1, "step": 5}}}
    f.on_sent(5, 10.0)
    f.on_job("MODIFIED", job, 10.2)
    f.on_job("MODIFIED", job, 11.0)  # the same step again: not a change
    f.on_sent(10, 15.0)
    f.on_sent(15, 20.0)
    f.on_job("MODIFIED", {"status": {"progress": {"step": 15}}}, 20.5)  # 10 and 15 in one write
    f.on_sent(20, 25.0)  # never shown
    f.on_job("MODIFIED", {"status": {}}, 26.0)
    lags, missing = f.lags()
    assert [round(x, 2) for x in lags] == [0.2, 5.5, 0.5]
    assert missing == 1
    assert f.last_shown() == 15
    assert f.lags(since=20.0)[1] == 1 and len(f.lags(since=20.0)[0]) == 1


def test_a_step_shown_before_the_write_does_not_follow_it():
    f = ProgressFollow()
    f.on_job("ADDED", {"status": {"progress": {"step": 50}}}, 1.0)
    f.on_sent(5, 2.0)
    assert f.lags() == ([], 1)
