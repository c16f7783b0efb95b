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


def test_growth_of_a_missing_or_zero_figure_is_a_dash():
    assert table.growth("—", "3.0") == "—"
    assert table.growth("0", "3.0") == "—"
    assert table.growth("2.0 / 9.0", "5.0 / 1.0") == "x2.5"
