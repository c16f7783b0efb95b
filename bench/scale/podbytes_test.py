"""podbytes.py: a pod's bytes, part by part."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from podbytes import parts, size, table  # noqa: E402

POD = {"metadata": {"name": "p", "labels": {"a": "1"},
                    "managedFields": [{"manager": "op", "operation": "Update", "fieldsV1": {"f:x": {}}},
                                      {"manager": "kwok", "operation": "Update", "subresource": "status"}]},
       "spec": {"initContainers": [{"name": "side", "env": [{"name": "X", "value": "1"}],
                                    "readinessProbe": {"periodSeconds": 2}, "ports": [{"containerPort": 1}]}],
                "containers": [{"name": "t", "image": "i", "envFrom": [{"configMapRef": {"name": "c"}}]}],
                "volumes": [{"name": "v", "emptyDir": {}}]},
       "status": {"phase": "Running", "containerStatuses": [{"name": "t"}]}}


def test_each_part_is_its_compact_json():
    p = parts(POD)
    assert p["metadata.labels"] == size({"a": "1"}) == len('{"a":"1"}')
    assert p["metadata.annotations"] == 0
    assert p["managedFields op/Update"] == size(POD["metadata"]["managedFields"][0])
    assert p["managedFields kwok/Update/status"] == size(POD["metadata"]["managedFields"][1])
    assert p["spec.initContainers[side].env"] == size([{"name": "X", "value": "1"}])
    assert p["spec.initContainers[side].probes"] == size({"periodSeconds": 2})
    assert p["spec.initContainers[side].rest"] == size({"name": "side"})
    assert p["spec.containers[t].env"] == size([{"configMapRef": {"name": "c"}}]), "envFrom counts as env"
    assert p["spec.volumes"] == size([{"name": "v", "emptyDir": {}}])
    assert p["status.containerStatuses"] == size([{"name": "t"}])
    assert p["status.rest"] == size({"phase": "Running"})
    assert p["whole pod"] == size(POD)


def test_table_has_a_column_per_shape_and_leaves_out_parts_absent_from_all():
    other = {"metadata": {"name": "q"}, "spec": {"containers": [{"name": "t"}]}}
    lines = table({"ours": POD, "other": other}).splitlines()
    assert lines[0] == "| part | ours | other |"
    assert not any(line.startswith("| metadata.annotations |") for line in lines)
    assert f"| spec.volumes | {size(POD['spec']['volumes'])} | 0 |" in lines
    assert lines[-1] == f"| whole pod | {size(POD)} | {size(other)} |"
