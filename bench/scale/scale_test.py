"""Tests of scale.py's pure helpers: the API server's requests from two scrapes of its /metrics,
and the progress annotation the bench writes as pod 0's sidecar."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402

BEFORE = """# HELP apiserver_request_total Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="nccl.dev",resource="nccljobs",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"} 7
"""
AFTER = BEFORE.replace("} 10", "} 22").replace("} 3", "} 15").replace("} 7", "} 9") + \
    'apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1"} 1\n' \
    'apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 0\n'


def test_api_server_writes_by_resource_and_verb_all_codes_summed():
    before, after = scale.parse_metrics(BEFORE), scale.parse_metrics(AFTER)
    assert scale.api_server_requests(before, after) == {"nccljobs/status PUT": 12, "pods PATCH": 13}
    assert scale.api_server_requests(before, after, scale.READ_VERBS) == {"pods GET": 2}


def test_progress_annotation_is_what_the_sidecar_writes():
    value = json.loads(scale.progress_annotation(1, 25, 1000, 1.5))
    assert list(value) == ["attempt", "metrics", "step", "time", "total"]
    assert value["attempt"] == 1 and value["step"] == 25 and value["total"] == 1000
    assert value["metrics"] == {"loss": 1.5}
    assert len(value["time"]) == len("2026-12-04T20:00:00.000Z") and value["time"].endswith("Z")
