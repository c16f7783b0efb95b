"""Tests of table.py: the per-pod CPU row and the growth table from one size to another."""
import contextlib
import io
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import table  # noqa: E402


def result(size, pods, cpu_s, exist_p50):
    return {"controller": "operator", "scenario": "big", "size": size, "jobs": 1, "replicas": pods,
            "pods": pods, "create": {"seconds": 10.0, "cpu_s": cpu_s, "audit": {"operator create": pods},
                                     "times": {"exist": {"p50": exist_p50, "p99": exist_p50}}},
            "peak_rss_mib": 10.0}


def render(results):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    out = io.StringIO()
    sys.argv = ["table.py", f.name]
    with contextlib.redirect_stdout(out):
        table.main()
    os.unlink(f.name)
    return out.getvalue()


def row(text, name):
    lines = [line for line in text.splitlines() if line.startswith(f"| {name} |")]
    return [c.strip() for c in lines[-1].strip("|").split("|")[1:]] if lines else None


def test_cpu_per_pod_is_the_phase_cpu_over_the_pods_made():
    text = render([result(1, 4000, 8.0, 60.0)])
    assert row(text, "first attempt: CPU per pod (ms)") == ["2.00"]


def test_growth_is_the_larger_size_over_the_smaller_per_figure():
    text = render([result(1, 4000, 8.0, 60.0), result(0.1, 400, 0.4, 6.0)])
    assert "growth from the smaller size to the larger" in text
    assert row(text, "first attempt: all pods exist p50 / p99 (s)")[-1] == "x10.0"
    assert row(text, "first attempt: CPU per pod (ms)")[-1] == "x2.0"
    assert row(text, "peak RSS (MiB)")[-1] == "x1.0"


def test_no_growth_table_for_one_size():
    assert "growth" not in render([result(1, 4000, 8.0, 60.0)])


def test_a_run_without_the_gang_is_a_column_of_the_big_table_and_not_grown_with_the_gangs():
    nogang = dict(result(0.1, 400, 0.4, 5.0), scenario="big-nogang")
    text = render([result(1, 4000, 8.0, 60.0), nogang])
    assert "### big-nogang" not in text
    header = next(line for line in text.splitlines() if line.startswith("| measure |"))
    assert "operator without gang x0.1 (400)" in header
    assert row(text, "first attempt: all pods exist p50 / p99 (s)") == ["60.0 / 60.0", "5.0 / 5.0"]
    assert "growth" not in text, "one size each: the two are not one controller's sizes"


def test_growth_of_a_missing_or_zero_figure_is_a_dash():
    assert table.growth("—", "3.0") == "—"
    assert table.growth("0", "3.0") == "—"
    assert table.growth("2.0 / 9.0", "5.0 / 1.0") == "x2.5"


def window(reports, writes, seconds=60.0):
    w = {"name": "reports" if reports else "no reports", "reports": reports, "seconds": seconds,
         "api_writes": writes, "api_reads": {"pods GET": 3}, "cpu_s": 0.6, "rss_mib_start": 40.0,
         "rss_mib_end": 40.0, "rss_mib_max": 41.0, "audit": {"operator update": 12} if reports else {},
         "patches": 12 if reports else 0, "reconciles": 12 if reports else 0, "reconcile_seconds": 0.1}
    if reports:
        w["followed"] = {"sent": 12, "shown": 12, "missing": 0, "lag_p50_s": 0.05, "lag_max_s": 0.2,
                         "last_step_sent": 60, "last_step_shown": 60}
    return w


def test_extra_writes_per_interval_leave_the_clusters_own_noise_out():
    quiet = window(False, {"nodes/status PATCH": 600, "leases PUT": 30})
    busy = window(True, {"nodes/status PATCH": 601, "leases PUT": 30, "pods PATCH": 12, "nccljobs/status PUT": 12})
    assert table.extra_per_interval(quiet, busy) == {"nccljobs/status PUT": 1.0, "pods PATCH": 1.0}


def test_progress_table_has_a_column_per_window():
    r = {"controller": "operator", "scenario": "progress", "size": 1, "pods": 4096,
         "create": {"times": {"running": {"p50": 80.0, "p99": 80.0}}},
         "windows": [window(False, {"nodes/status PATCH": 600}),
                     window(True, {"nodes/status PATCH": 600, "pods PATCH": 12, "nccljobs/status PUT": 12})]}
    text = render([r])
    assert "### progress" in text
    assert row(text, "API server writes: pods PATCH") == ["—", "12 (0.20/s)"]
    assert row(text, "status.progress.step followed the patches (shown / sent)")[1].startswith("12 / 12")
    assert row(text, "extra writes per 5 s over the window without reports")[1] == \
        "nccljobs/status PUT +1.00, pods PATCH +1.00"
    assert row(text, "operator's writes in the namespace (audit)") == ["none", "update 12"]


def restarted(scenario, writes, kubelet_writes):
    r = result(1, 4096, 10.0, 1.0)
    r["scenario"] = scenario
    r["restart"] = {"seconds": 30.0, "cpu_s": 5.0, "audit": {"operator patch": 4096, "operator get": 1},
                    "times": {"running": {"p50": 20.0, "p99": 20.0, "max": 20.5, "n": 1},
                              "id": {"p50": 21.0, "p99": 21.0, "max": 21.25, "n": 1}},
                    "api_writes": writes, "api_reads": {"pods GET": kubelet_writes, "pods LIST": 2},
                    "kubelet_status_writes": kubelet_writes,
                    "cluster_cpu_s": {"apiserver": 40.0, "etcd": 9.5}}
    return r


def test_restart_cost_puts_recreation_and_in_place_side_by_side():
    out = render([restarted("big", {"pods DELETE": 8192, "pods POST": 4096, "roles DELETE": 1}, 0),
                  restarted("big-inplace", {"pods PATCH": 4096, "pods/status PATCH": 20480, "leases PUT": 3,
                                            "roles DELETE": 2}, 20480)])
    section = out.split("### restart: recreation and in place")[1]
    assert "| measure | recreation x1 (4096) | in place x1 (4096) |" in section
    assert "| API server writes, all | 12289 | 24581 |" in section
    assert "| API server writes: other kinds, each at most 3 | 1 | 5 |" in section
    assert "roles DELETE" not in section and "leases PUT" not in section
    assert "| API server writes: pods DELETE | 8192 | — |" in section
    assert "| API server writes: pods/status PATCH | — | 20480 |" in section
    assert "| status writes the bench played as kubelets (each a GET and a PATCH) | 0 | 20480 |" in section
    assert "| from the failure: id published (s) | 21.25 | 21.25 |" in section
    assert "| operator's writes in the namespace (audit) | patch 4096 | patch 4096 |" in section
    assert "| CPU s of apiserver / etcd | 40.0 / 9.5 | 40.0 / 9.5 |" in section


def test_no_restart_cost_table_without_an_in_place_run():
    assert "### restart: recreation" not in render([restarted("big", {"pods POST": 1}, 0)])
