"""podcost.py's derived shapes: what each leaves out or moves."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from podcost import at, env_once, leaves, without, without_label_copies  # noqa: E402


def pod(index):
    env = [{"name": "JOB", "value": "j"}, {"name": "INDEX", "value": str(index)},
           {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    return {"metadata": {"labels": {"a": "1", "b": "2"}, "annotations": {"a": "1", "b": "3"}},
            "spec": {"initContainers": [{"name": "side", "env": env[:2]}],
                     "containers": [{"name": "t", "env": env, "ports": [{"containerPort": 1, "protocol": "TCP"}]}]}}


def test_leaves_walk_lists_of_objects_by_index_and_without_leaves_out_one():
    spec = pod(0)["spec"]
    paths = [p for p, _ in leaves(spec)]
    assert ("containers", 0, "ports", 0, "protocol") in paths
    assert at(spec, ("containers", 0, "ports", 0, "protocol")) == "TCP"
    cut = without(spec, ("containers", 0, "ports", 0, "protocol"))
    assert cut["containers"][0]["ports"] == [{"containerPort": 1}]
    assert spec["containers"][0]["ports"][0]["protocol"] == "TCP", "the original stays whole"


def test_only_annotations_that_repeat_a_label_go():
    assert without_label_copies(pod(0))["metadata"]["annotations"] == {"b": "3"}


def test_env_once_moves_what_both_pods_share_and_keeps_the_rest_in_order():
    moved, data = env_once(pod(0), pod(1), "cm")
    assert data == {"JOB": "j"}
    for c in moved["spec"]["initContainers"] + moved["spec"]["containers"]:
        assert c["envFrom"] == [{"configMapRef": {"name": "cm"}}]
        assert "JOB" not in [v["name"] for v in c["env"]]
    assert [v["name"] for v in moved["spec"]["containers"][0]["env"]] == ["INDEX", "POD_IP"]
