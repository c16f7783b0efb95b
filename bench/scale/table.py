#!/usr/bin/env python3
"""Markdown tables of bench/scale/run.sh's results.jsonl: one table per scenario, each size and
controller a column; then, for a controller measured at two sizes, how each figure grew from the
smaller size to the larger (the larger's value over the smaller's). The progress scenario: one
column per steady window (without and with pod 0's progress reports). The restart of big and
big-inplace side by side: what one restart of the job cost the whole cluster, by recreation and in
place."""
import json
import sys


def fmt(v, digits=1):
    if v is None:
        return "—"
    if isinstance(v, float):
        return "∞" if v == float("inf") else f"{v:.{digits}f}"
    return str(v)


def dig(r, *path):
    for p in path:
        if not isinstance(r, dict) or p not in r:
            return None
        r = r[p]
    return r


def per(r, phase, who, writes_only, divide_by):
    counts = dig(r, phase, "audit") or {}
    verbs = ("create", "update", "patch", "delete", "deletecollection")
    n = sum(v for k, v in counts.items()
            if k.split()[0] in who and (not writes_only or k.split()[1] in verbs))
    return n / divide_by if divide_by else None


def pods_of(r, phase):
    """Pods the controller made in a phase: every pod of every job (churn: of the jobs it ran)."""
    if phase == "churn":
        jobs = dig(r, "churn", "jobs")
        return jobs * r.get("replicas", 8) if jobs else None
    return r.get("pods")


def first_number(cell):
    """The first figure of a cell ("68.2 / 70.1" -> 68.2), or None for "—" and text."""
    try:
        return float(cell.split(" ")[0])
    except (ValueError, AttributeError):
        return None


def growth(small, large):
    """The larger size's figure over the smaller's ("x9.8"), or "—" where either is missing or 0."""
    a, b = first_number(small), first_number(large)
    if a is None or b is None or a == 0:
        return "—"
    return f"x{b / a:.1f}"


def rows_for(r):
    jobs = r.get("jobs") or dig(r, "churn", "jobs") or 1
    who = ("operator",) if r["controller"] == "operator" else ("jobset", "jobctl")
    out = []
    for phase, label in (("create", "first attempt"), ("restart", "after a rank failed"), ("churn", "churn")):
        if phase not in r:
            continue
        secs = dig(r, phase, "seconds")
        for what in ("exist", "running", "id"):
            t = dig(r, phase, "times", what)
            if t:
                out.append((f"{label}: all pods {what} p50 / p99 (s)" if what != "id" else f"{label}: id published p50 / p99 (s)",
                            f"{fmt(t['p50'])} / {fmt(t['p99'])}"))
        out.append((f"{label}: CPU (s)", fmt(dig(r, phase, "cpu_s"), 2)))
        made = pods_of(r, phase)
        if dig(r, phase, "cpu_s") is not None and made:
            out.append((f"{label}: CPU per pod (ms)", fmt(1000 * dig(r, phase, "cpu_s") / made, 2)))
        out.append((f"{label}: API requests / job (writes)",
                    f"{fmt(per(r, phase, who, False, jobs))} ({fmt(per(r, phase, who, True, jobs))})"))
        out.append((f"{label}: API requests / s", fmt(per(r, phase, who, False, secs))))
        out.append((f"{label}: API latency p99 (s)", fmt(dig(r, phase, "api_latency_p99_s"), 3)))
        for verb in ("create", "delete"):
            lat = dig(r, phase, "server_latency_s", f"{who[-1]} {verb}")
            if lat:
                out.append((f"{label}: API server's time per pod {verb} p50 / p99 (s)",
                            f"{fmt(lat['p50'], 3)} / {fmt(lat['p99'], 3)}"))
        parts = dig(r, phase, "cluster_cpu_s")
        if parts:
            out.append((f"{label}: CPU s of " + " / ".join(parts), " / ".join(fmt(v, 0) for v in parts.values())))
        if dig(r, phase, "kubelet_configmap_reads") is not None:
            out.append((f"{label}: ConfigMap reads played as kubelets (LIST + WATCH)",
                        fmt(dig(r, phase, "kubelet_configmap_reads"))))
        out.append((f"{label}: work-queue depth max", fmt(dig(r, phase, "queue_depth_max"))))
        if dig(r, phase, "reconciles") is not None:
            out.append((f"{label}: reconciles (their seconds)",
                        f"{dig(r, phase, 'reconciles')} ({fmt(dig(r, phase, 'reconcile_seconds'))})"))
    out.append(("peak RSS (MiB)", fmt(r.get("peak_rss_mib"))))
    if r.get("pod_bytes"):
        out.append(("pod object as served (bytes)", fmt(r["pod_bytes"])))
    if r.get("error"):
        out.append(("did not finish", r["error"].split(":")[0] + ": " + r["error"].split(":", 1)[1].strip()[:60]))
    return out


def rate(n, seconds):
    return f"{n} ({n / seconds:.2f}/s)" if seconds else str(n)


def extra_per_interval(quiet, busy, interval=5):
    """Writes by "resource VERB" that a window with reports (busy) made beyond one without (quiet),
    each window's count per second times `interval`: what one interval of reports costs. Keys
    whose difference is under 0.1 per interval are left out (the cluster's own noise)."""
    out = {}
    for key in sorted(set(quiet["api_writes"]) | set(busy["api_writes"])):
        d = interval * (busy["api_writes"].get(key, 0) / busy["seconds"] - quiet["api_writes"].get(key, 0) / quiet["seconds"])
        if abs(d) >= 0.1:
            out[key] = round(d, 2)
    return out


def progress_columns(r):
    """(column title, {measure: cell}) per steady window of one progress result."""
    windows = r.get("windows") or []
    quiet = next((w for w in windows if not w["reports"]), None)
    running = dig(r, "create", "times", "running")
    cols = []
    for w in windows:
        secs = w["seconds"]
        cells = {"pods (all Running after, s)": f"{r.get('pods')} ({fmt(running and running['p50'])})",
                 "window (s)": fmt(secs),
                 "progress patches of pod 0 (the bench as its sidecar)": str(w.get("patches", 0))}
        if w.get("followed"):
            f = w["followed"]
            cells["status.progress.step followed the patches (shown / sent)"] = (
                f"{f['shown']} / {f['sent']} (last step {f['last_step_shown']} / {f['last_step_sent']})")
            cells["status.progress lag p50 / max (s)"] = f"{fmt(f['lag_p50_s'], 2)} / {fmt(f['lag_max_s'], 2)}"
        writes = w["api_writes"]
        cells["API server writes, all"] = rate(sum(writes.values()), secs)
        for key, n in writes.items():
            cells[f"API server writes: {key}"] = rate(n, secs)
        cells["API server reads (GET, LIST), all"] = rate(sum(w.get("api_reads", {}).values()), secs)
        if w["reports"] and quiet:
            extra = extra_per_interval(quiet, w)
            cells["extra writes per 5 s over the window without reports"] = (
                ", ".join(f"{k} {v:+.2f}" for k, v in extra.items()) or "none")
        cells["operator's writes in the namespace (audit)"] = ", ".join(
            f"{k.split()[1]} {v}" for k, v in sorted(w.get("audit", {}).items())
            if k.startswith("operator ") and k.split()[1] in WRITES) or "none"
        cells["operator's API requests (its metric)"] = ", ".join(
            f"{k} {v}" for k, v in sorted(w.get("requests_by_verb", {}).items())) or "none"
        if "reconciles" in w:
            cells["operator reconciles (their seconds)"] = f"{w['reconciles']} ({fmt(w['reconcile_seconds'], 3)})"
        cells["operator CPU s (% of one core)"] = f"{fmt(w['cpu_s'], 2)} ({100 * w['cpu_s'] / secs:.2f} %)"
        cells["operator RSS start / end / max (MiB)"] = (
            f"{fmt(w['rss_mib_start'])} / {fmt(w['rss_mib_end'])} / {fmt(w['rss_mib_max'])}")
        parts = w.get("cluster_cpu_s")
        if parts:
            cells["CPU s of " + " / ".join(parts)] = " / ".join(fmt(v, 1) for v in parts.values())
        title = f"{r['controller']} x{r.get('size', 1):g} ({r.get('pods')}): {'reports' if w['reports'] else 'no reports'}"
        cols.append((title, cells))
    if r.get("error"):
        cols.append((f"{r['controller']} x{r.get('size', 1):g} ({r.get('pods')})", {"did not finish": r["error"][:120]}))
    return cols


def print_progress(rs):
    cols = [c for r in rs for c in progress_columns(r)]
    # rows in the order of the column with the most (a window with reports has them all)
    order = list(dict.fromkeys(k for _, cells in sorted(cols, key=lambda c: -len(c[1])) for k in cells))
    # the API server's writes by resource after its total, in name order
    by_key = sorted(k for k in order if k.startswith("API server writes: "))
    rest = [k for k in order if not k.startswith("API server writes: ")]
    at = rest.index("API server writes, all") + 1 if "API server writes, all" in rest else len(rest)
    order = rest[:at] + by_key + rest[at:]
    print("\n### progress\n")
    print("| measure | " + " | ".join(t for t, _ in cols) + " |")
    print("| --- |" + " --- |" * len(cols))
    for k in order:
        print(f"| {k} | " + " | ".join(cells.get(k, "—") for _, cells in cols) + " |")


WRITES = ("create", "update", "patch", "delete", "deletecollection")


def restart_cost_cells(r):
    """{measure: cell} of one big or big-inplace result's restart: the times from the failure, the
    API server's requests of the whole cluster by resource and verb, each part's CPU seconds."""
    phase = r.get("restart") or {}
    cells = {}
    for what, label in (("running", "from the failure: all pods serve the next attempt (s)"),
                        ("id", "from the failure: id published (s)")):
        t = dig(phase, "times", what)
        cells[label] = fmt(t and t["max"], 2)
    writes = phase.get("api_writes")
    if writes is not None:
        cells["API server writes, all"] = str(sum(writes.values()))
        for key, n in writes.items():
            cells[f"API server writes: {key}"] = str(n)
        cells["API server reads (GET, LIST), all"] = str(sum((phase.get("api_reads") or {}).values()))
        for key, n in (phase.get("api_reads") or {}).items():
            if key.startswith("pods "):
                cells[f"API server reads: {key}"] = str(n)
    cells["status writes the bench played as kubelets (each a GET and a PATCH)"] = fmt(phase.get("kubelet_status_writes"))
    cells["operator's writes in the namespace (audit)"] = ", ".join(
        f"{k.split()[1]} {v}" for k, v in sorted((phase.get("audit") or {}).items())
        if k.startswith("operator ") and k.split()[1] in WRITES) or "—"
    cells["operator CPU (s)"] = fmt(phase.get("cpu_s"), 2)
    parts = phase.get("cluster_cpu_s")
    if parts:
        cells["CPU s of " + " / ".join(parts)] = " / ".join(fmt(v, 1) for v in parts.values())
    if r.get("error"):
        cells["did not finish"] = r["error"][:120]
    return cells


SMALL = 3


def print_restart_cost(rs):
    cols = [(f"{'in place' if r['scenario'] == 'big-inplace' else 'recreation'} x{r.get('size', 1):g} ({r.get('pods')})",
             restart_cost_cells(r)) for r in rs]
    order = list(dict.fromkeys(k for _, cells in cols for k in cells))
    # Kinds written at most SMALL times in every run (the last run's namespace going, leases) are
    # summed into one row: the restart's own writes stand out.
    small = [k for k in order if k.startswith("API server writes: ")
             and all(int(cells.get(k, "0")) <= SMALL for _, cells in cols)]
    for _, cells in cols:
        cells["API server writes: other kinds, each at most 3"] = str(sum(int(cells.pop(k, "0")) for k in small))
    by_key = sorted(k for k in order if k.startswith("API server writes: ") and k not in small)
    by_key.append("API server writes: other kinds, each at most 3")
    rest = [k for k in order if not k.startswith("API server writes: ")]
    at = rest.index("API server writes, all") + 1 if "API server writes, all" in rest else len(rest)
    order = rest[:at] + by_key + rest[at:]
    print("\n### restart: recreation and in place (the whole cluster, one restart)\n")
    print("| measure | " + " | ".join(t for t, _ in cols) + " |")
    print("| --- |" + " --- |" * len(cols))
    for k in order:
        print(f"| {k} | " + " | ".join(cells.get(k, "—") for _, cells in cols) + " |")


def main():
    results = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    progress = [r for r in results if r["scenario"] == "progress"]
    if progress:
        print_progress(progress)
    for scenario in ("big", "big-inplace", "many", "churn"):
        # big-nogang is big with the job's gang off: a column of big's table.
        rs = [r for r in results if r["scenario"] == scenario or (scenario, r["scenario"]) == ("big", "big-nogang")]
        if not rs:
            continue
        cols = [f"{who(r)} x{r.get('size', 1):g} ({r.get('pods') or r.get('rate_jobs_per_s', '')})" for r in rs]
        table = {}
        order = []
        for i, r in enumerate(rs):
            for k, v in rows_for(r):
                if k not in table:
                    table[k] = ["—"] * len(rs)
                    order.append(k)
                table[k][i] = v
        print(f"\n### {scenario}\n")
        print("| measure | " + " | ".join(cols) + " |")
        print("| --- |" + " --- |" * len(cols))
        for k in order:
            print(f"| {k} | " + " | ".join(table[k]) + " |")
        print_growth(scenario, rs, table, order)
    both = [r for r in results if r["scenario"] in ("big", "big-inplace") and r["controller"] == "operator"]
    if any(r["scenario"] == "big-inplace" for r in both):
        print_restart_cost(both)


def who(r):
    """The column's controller, with the job's gang off where big-nogang ran it."""
    return r["controller"] + (" without gang" if r["scenario"] == "big-nogang" else "")


def print_growth(scenario, rs, table, order):
    """One column per controller measured at two or more sizes: its largest size over its smallest."""
    pairs = []
    for controller in dict.fromkeys(who(r) for r in rs):
        idx = sorted((i for i, r in enumerate(rs) if who(r) == controller), key=lambda i: rs[i].get("size", 1))
        if len(idx) >= 2:
            pairs.append((controller, idx[0], idx[-1]))
    if not pairs:
        return
    print(f"\n{scenario}: growth from the smaller size to the larger (larger / smaller; for "
          "p50 / p99 cells the p50)\n")
    print("| measure | " + " | ".join(
        f"{c} x{rs[b].get('size', 1):g} / x{rs[a].get('size', 1):g}" for c, a, b in pairs) + " |")
    print("| --- |" + " --- |" * len(pairs))
    for k in order:
        cells = [growth(table[k][a], table[k][b]) for _, a, b in pairs]
        if any(c != "—" for c in cells):
            print(f"| {k} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
