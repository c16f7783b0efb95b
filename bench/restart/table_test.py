"""table.py and timeline.py on lines written as the real node writes them."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import timeline  # noqa: E402


def run_table(tmp_path, lines):
    f = tmp_path / "samples.txt"
    f.write_text("".join(line + "\n" for line in lines))
    return subprocess.run([sys.executable, os.path.join(HERE, "table.py"), str(f)], check=True,
                          capture_output=True, text=True).stdout


def test_rows_and_the_ratio_to_recreation(tmp_path):
    out = run_table(tmp_path, [
        "InPlace default 4 1 2.0", "InPlace default 4 1 3.0", "InPlace default 4 1 4.0",
        "Recreate default 4 1 6.0", "JobSetInPlace default 4 1 4.5",
        "InPlace EventedPLEG 4 1 1.5", "Recreate EventedPLEG 4 1 5.0",
    ])
    assert "| InPlace | default | 4 | 1 | 3 | 3.00 | 4.00 | 2.00 | 4.00 |" in out
    assert "| default | 4 | 1 | 3.00 | 4.50 | 6.00 | 0.50 | 0.75 |" in out
    assert "| EventedPLEG | 4 | 1 | 1.50 |  | 5.00 | 0.30 |  |" in out
    # The default kubelet's rows come first.
    assert out.index("| InPlace | default |") < out.index("| InPlace | EventedPLEG |")


def test_times_of_the_three_log_formats():
    assert abs(timeline.cri_time("2026-12-04T23:46:00.5Z") - 1796427960.5) < 1e-6
    assert abs(timeline.cri_time("2026-12-04T23:46:00Z") - 1796427960.0) < 1e-6
    assert abs(timeline.kubelet_time("1204", "23:46:00.250000", 2026) - 1796427960.25) < 1e-6


def test_kubelet_and_jobset_lines(tmp_path):
    t0 = timeline.cri_time("2026-12-04T23:46:00Z")
    kubelet = tmp_path / "kubelet.log"
    kubelet.write_text(
        'I1204 23:46:00.500000   123 kubelet.go:2788] "SyncLoop (PLEG): event for pod" pod="ns/job-1" '
        'event={"ID":"u1","Type":"ContainerDied","Data":"c1"}\n'
        'I1204 23:46:00.600000   123 kubelet.go:2767] "SyncLoop UPDATE" source="api" pods=["other/x-0"]\n'
        'I1204 23:46:01.000000   123 kubelet.go:2877] "SyncLoop (probe)" probe="startup" status="started" pod="ns/job-2"\n')
    rows = list(timeline.kubelet_rows(str(kubelet), "ns", "job-", t0, t0 + 5, 2026))
    assert [(round(t - t0, 3), pod, what) for t, pod, _, what in rows] == [
        (0.5, "job-1", "SyncLoop (PLEG): event for pod ContainerDied"),
        (1.0, "job-2", "SyncLoop (probe) startup started"),
    ]
    manager = tmp_path / "jobset.log"
    manager.write_text('2026-12-04T23:46:00.75Z\tINFO\tUpdated current in-place restart attempt\t'
                       '{"controller": "jobset", "currentInPlaceRestartAttempt": 2}\n'
                       '2026-12-04T23:46:00.8Z\tINFO\treconciling\t{}\n')
    rows = list(timeline.jobset_rows(str(manager), t0, t0 + 5))
    assert [(round(t - t0, 3), what) for t, _, _, what in rows] == [(0.75, "Updated current in-place restart attempt 2")]
