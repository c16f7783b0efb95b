"""scale.png from bench/scale/run.sh's results.jsonl (run through plot.sh, which brings
matplotlib): how times, memory and API writes grow with the number of pods, the operator beside
JobSet. Usage: plot.py RESULTS.jsonl OUT.png"""
import json
import sys

import matplotlib.pyplot as plt

STYLE = {"operator": ("tab:blue", "o"), "jobset": ("tab:orange", "s")}


def pods_of(r):
    return r.get("pods") or r.get("replicas", 8) * (r.get("churn", {}).get("jobs") or 1)


def writes_per_pod(r, phase):
    who = ("operator",) if r["controller"] == "operator" else ("jobset", "jobctl")
    counts = r.get(phase, {}).get("audit", {})
    writes = sum(v for k, v in counts.items()
                 if k.split()[0] in who and k.split()[1] in ("create", "update", "patch", "delete"))
    return writes / pods_of(r)


def series(results, scenario, controller, value):
    pts = sorted((pods_of(r), value(r)) for r in results
                 if r["scenario"] == scenario and r["controller"] == controller)
    pts = [(x, y) for x, y in pts if y is not None]
    return [x for x, _ in pts], [y for _, y in pts]


def times(phase, what):
    return lambda r: (r.get(phase, {}).get("times", {}).get(what) or {}).get("p99")


def main():
    results = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    panels = [
        (axes[0][0], "big: one job, time after create / after the failure (s)",
         [("big", "create", "exist", "-"), ("big", "create", "running", "--"), ("big", "restart", "exist", ":")]),
        (axes[0][1], "many: jobs x 8 pods at once, p99 per job (s)",
         [("many", "create", "exist", "-"), ("many", "create", "running", "--"), ("many", "restart", "exist", ":")]),
    ]
    for ax, title, lines in panels:
        for scenario, phase, what, dash in lines:
            for c, (color, marker) in STYLE.items():
                x, y = series(results, scenario, c, times(phase, what))
                if x:
                    ax.plot(x, y, dash, color=color, marker=marker, label=f"{c}: {phase} {what}")
        ax.axhline(60, color="grey", lw=0.8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("pods")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    ax = axes[1][0]
    for scenario in ("big", "many", "churn"):
        for c, (color, marker) in STYLE.items():
            x, y = series(results, scenario, c, lambda r: r.get("peak_rss_mib"))
            if x:
                ax.plot(x, y, "-", color=color, marker=marker, label=f"{c}: {scenario}")
    ax.axhline(64, color="grey", lw=0.8)
    ax.set_title("controller peak RSS (MiB); line: 64 MiB", fontsize=10)
    ax.set_xlabel("pods (churn: pods over the run)")
    ax.set_xscale("log")
    ax.legend(fontsize=7)
    ax = axes[1][1]
    for scenario in ("big", "many", "churn"):
        phase = "churn" if scenario == "churn" else "create"
        for c, (color, marker) in STYLE.items():
            x, y = series(results, scenario, c, lambda r: writes_per_pod(r, phase) if phase in r else None)
            if x:
                ax.plot(x, y, "-", color=color, marker=marker, label=f"{c}: {scenario}")
    ax.set_title("API writes per pod, first attempt (JobSet: + its Job controller)", fontsize=10)
    ax.set_xlabel("pods")
    ax.set_xscale("log")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
