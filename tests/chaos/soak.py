#!/usr/bin/env python3
"""Soak: keeps JOBS NcclJobs of REPLICAS pods in churn on a real local control plane, testnode and
nccl-operator (a host process) for MINUTES, and samples the operator every SAMPLE seconds:
resident memory, threads, open file descriptors, and reconcile latency (mean and p99 of the
interval, from its /metrics histograms), and the Events written so far; with --heap also the
bytes malloc holds in use (gdb calls the operator's malloc_stats(), pausing it a moment: for
finding what grows, not for the latency figures). Each job, when made, draws what it does: succeed after
training 3-30 seconds, fail once (rank 1 exits 1 in attempt 1: a restart, then success), or be
deleted while it runs. A job that ends is deleted and replaced at once.

  tests/chaos/soak.py [--minutes 30] [--jobs 50] [--replicas 4] [--sample 10] [--heap]
                      [--build DIR] [--work DIR] [--csv FILE]

Prints one line per sample (CSV with --csv too) and a summary: first versus last fifth of the
run for each resource, and the largest value. Exit status 1 when the operator exited, a job
ended Failed, or objects of deleted jobs were left at the end. Needs root (testnode); local only
(loopback and the bridge tnc<--bridge-index>)."""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import invariants  # noqa: E402
from chaos import job_object, trainer_script  # noqa: E402
from cluster import Cluster, jobs_path, log, wait_until  # noqa: E402
from start_up import add_run_options, start  # noqa: E402


def proc_sample(pid):
    with open(f"/proc/{pid}/status") as f:
        status = f.read()
    rss_kb = int(re.search(r"^VmRSS:\s+(\d+)", status, re.M).group(1))
    threads = int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))
    return rss_kb / 1024, threads, len(os.listdir(f"/proc/{pid}/fd"))


def heap_in_use_mib(pid, log_path):
    """malloc's bytes in use (all arenas and mmapped chunks): gdb makes the operator call
    malloc_stats(), which prints to its stderr (the operator's log); None when that failed."""
    with open(log_path, "rb") as f:
        f.seek(0, os.SEEK_END)
        start = f.tell()
    subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "call (void)malloc_stats()"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)
    with open(log_path, "rb") as f:
        f.seek(start)
        text = f.read().decode(errors="replace")
    total = re.search(r"Total \(incl. mmap\):\s*system bytes\s*=\s*\d+\s*in use bytes\s*=\s*(\d+)", text)
    return int(total.group(1)) / (1 << 20) if total else None


def events_written(cluster):
    """Events in the namespace (the operator's; the API server keeps them an hour)."""
    code, body = cluster.api.call("GET", f"/api/v1/namespaces/{cluster.ns}/events?limit=1")
    if code != 200 or not isinstance(body, dict):
        return None
    return len(body.get("items") or []) + int(body.get("metadata", {}).get("remainingItemCount") or 0)


def histogram(text, name):
    """(sum, count, [(le, cumulative)]) of one histogram in Prometheus text."""
    total = float(re.search(rf"^{name}_sum (\S+)", text, re.M).group(1))
    count = float(re.search(rf"^{name}_count (\S+)", text, re.M).group(1))
    buckets = [(float("inf") if le == "+Inf" else float(le), float(v))
               for le, v in re.findall(rf'^{name}_bucket{{le="([^"]+)"}} (\S+)', text, re.M)]
    return total, count, buckets


def interval_stats(before, after):
    """Mean and p99 (bucket upper bound) of the observations between two histogram readings."""
    if before is None or after is None:
        return None, None
    n = after[1] - before[1]
    if n <= 0:
        return None, None
    mean = (after[0] - before[0]) / n
    for (le, c1), (_, c0) in zip(after[2], before[2]):
        if c1 - c0 >= 0.99 * n:
            return mean, le
    return mean, float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--jobs", type=int, default=50, help="NcclJobs alive at a time (default 50)")
    ap.add_argument("--replicas", type=int, default=4, help="pods per job (default 4)")
    ap.add_argument("--sample", type=float, default=10, help="seconds between samples (default 10)")
    ap.add_argument("--heap", action="store_true",
                    help="also sample malloc's bytes in use (gdb attaches to the operator each sample)")
    add_run_options(ap, "soak", bridge_index=14)
    ap.add_argument("--csv", default=None, help="write the samples here too")
    args = ap.parse_args()
    build, seed, rng, work = start(args, "soak", "the soak")
    cluster = Cluster(work, build, ns="soak", bridge_index=args.bridge_index)
    problems, samples = [], []
    made = {"succeed": 0, "fail-once": 0, "delete": 0}
    ended = {"Succeeded": 0, "Failed": 0, "deleted": 0}
    deleted_uids = set()
    csv = open(args.csv, "w") if args.csv else None
    header = ("t_s,jobs_live,pods,rss_mib,threads,fds,reconciles,reconcile_mean_ms,reconcile_p99_le_ms,"
              "queue_mean_ms,events,heap_mib")
    try:
        cluster.start()
        log(f"soak: seed {seed}, {args.jobs} jobs x {args.replicas} pods, {args.minutes} min, state {work}")
        live = {}  # name -> (behaviour, delete_at)
        serial = 0
        started = time.monotonic()
        next_sample = started
        last_hist = None
        print(header, flush=True)
        if csv:
            print(header, file=csv, flush=True)
        while time.monotonic() - started < args.minutes * 60:
            # top up
            while len(live) < args.jobs:
                behaviour = rng.choices(["succeed", "fail-once", "delete"], weights=[3, 1, 1])[0]
                name = f"s{serial}"
                serial += 1
                script = trainer_script(cluster.trainer_logs, linger=rng.randint(3, 30),
                                        fail_once=behaviour == "fail-once")
                obj = job_object(name, args.replicas, build, cluster.trainer_logs, script=script)
                code, _ = cluster.api.call("POST", jobs_path(cluster.ns), obj)
                if code != 201:
                    problems.append(f"creating {name}: HTTP {code}")
                    time.sleep(1)
                    break
                made[behaviour] += 1
                live[name] = (behaviour, time.monotonic() + rng.uniform(5, 40) if behaviour == "delete" else None)
            # reap
            jobs = {j["metadata"]["name"]: j for j in cluster.api.items(jobs_path(cluster.ns)) or []}
            for name, (behaviour, delete_at) in list(live.items()):
                j = jobs.get(name)
                state = (j or {}).get("status", {}).get("state")
                if state in ("Succeeded", "Failed") or (delete_at and time.monotonic() > delete_at):
                    if state == "Failed":
                        problems.append(f"{name} ({behaviour}) Failed: {j['status'].get('message', '')}")
                    ended[state if state in ("Succeeded", "Failed") else "deleted"] += 1
                    if j:
                        deleted_uids.add(j["metadata"]["uid"])
                    cluster.api.call("DELETE", jobs_path(cluster.ns, name))
                    del live[name]
            if cluster.operator_exited_by_itself():
                problems.append(f"the operator exited (code {cluster.operator_proc.returncode})")
                break
            now = time.monotonic()
            if now >= next_sample:
                next_sample += args.sample
                rss, threads, fds = proc_sample(cluster.operator_proc.pid)
                text = cluster.metrics()
                try:
                    hist = histogram(text, "ncclop_reconcile_duration_seconds")
                    queue = histogram(text, "ncclop_workqueue_queue_duration_seconds")
                except AttributeError:
                    hist = queue = None
                mean, p99 = interval_stats(last_hist and last_hist[0], hist)
                qmean, _ = interval_stats(last_hist and last_hist[1], queue)
                n = (hist[1] - last_hist[0][1]) if hist and last_hist else 0
                last_hist = (hist, queue) if hist else last_hist
                pods = len(cluster.api.items(f"/api/v1/namespaces/{cluster.ns}/pods") or [])
                heap = heap_in_use_mib(cluster.operator_proc.pid, f"{work}/operator.log") if args.heap else None
                row = (now - started, len(live), pods, rss, threads, fds, int(n),
                       None if mean is None else mean * 1000, None if p99 is None else p99 * 1000,
                       None if qmean is None else qmean * 1000, events_written(cluster), heap)
                samples.append(row)
                line = ",".join("" if v is None else (f"{v:.1f}" if isinstance(v, float) else str(v)) for v in row)
                print(line, flush=True)
                if csv:
                    print(line, file=csv, flush=True)
            time.sleep(0.5)
        # wind down: delete everything, nothing may stay
        deleted_uids |= cluster.delete_jobs(list(live))
        try:
            wait_until("soak: nothing left", 180,
                       lambda: not invariants.leftovers(cluster.api, cluster.ns, deleted_uids), 1)
        except TimeoutError:
            problems.append(f"left after deletion: {invariants.leftovers(cluster.api, cluster.ns, deleted_uids)[:10]}")
        creates, _ = invariants.pod_creates(cluster.audit_log, cluster.ns)
        problems += invariants.no_duplicate_pods(creates)
    finally:
        cluster.stop()
    summarize(samples, made, ended, problems, seed, args)
    return 1 if problems else 0


def summarize(samples, made, ended, problems, seed, args):
    print(f"\nsoak: seed {seed}, {args.jobs} jobs x {args.replicas} pods, ran "
          f"{samples[-1][0] / 60 if samples else 0:.1f} min; jobs made {sum(made.values())} {made}; ended {ended}")
    if len(samples) >= 5:
        fifth = max(1, len(samples) // 5)
        first, last = samples[:fifth], samples[-fifth:]
        cols = {"rss_mib": 3, "threads": 4, "fds": 5, "reconcile_mean_ms": 7, "reconcile_p99_le_ms": 8,
                "events": 10, "heap_mib": 11}
        print(f"{'':22s} {'first fifth':>12s} {'last fifth':>12s} {'max':>10s}")
        for label, i in cols.items():
            def mean(rows):
                vals = [r[i] for r in rows if r[i] is not None and r[i] != float("inf")]
                return sum(vals) / len(vals) if vals else float("nan")
            vals = [r[i] for r in samples if r[i] is not None]
            print(f"{label:22s} {mean(first):12.1f} {mean(last):12.1f} {max(vals) if vals else float('nan'):10.1f}")
    for p in problems:
        print("PROBLEM", p)


if __name__ == "__main__":
    sys.exit(main())
