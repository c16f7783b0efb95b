#!/usr/bin/env python3
"""Scrapes a running nccl-operator's /metrics and parses it with the Prometheus project's own
Python text parser (prometheus_client, pinned, installed into the build dir), then checks what
operator dashboards rely on: every job state reported (0 included), no empty label values,
process_*, ncclop_build_info, the reconcile queue's depth/adds/wait and the API client's
requests by verb and code. Then the metric catalog (operator/src/metrics/catalog.h) against what
the operator serves: every family of the catalog is there with its type and label names, and
nothing else is; and every metric the chart's dashboard and alerts select is served.

Env (set by CTest): NCCLOP_TEST_KUBECONFIG, NCCLOP_TEST_KUBECTL, NCCLOP_OPERATOR_BIN,
NCCLOP_CRD_FILE, NCCLOP_BUILD_DIR, NCCLOP_METRIC_CATALOG, NCCLOP_TEST_HELM.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PROMETHEUS_CLIENT = "prometheus-client==0.26.0"
STATES = {"Pending", "Running", "Restarting", "Succeeded", "Failed", "Suspended", "Unknown"}

failures = []


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message.splitlines()[0])
    if not ok:
        failures.append(message)
    return ok


def import_parser():
    target = Path(os.environ["NCCLOP_BUILD_DIR"]) / "pydeps" / PROMETHEUS_CLIENT.replace("==", "-")
    if not (target / "prometheus_client").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--root-user-action=ignore",
                        "--no-deps", "--target", str(target), PROMETHEUS_CLIENT], check=True)
    sys.path.insert(0, str(target))
    from prometheus_client.parser import text_string_to_metric_families
    return text_string_to_metric_families


def kubectl(*args, stdin=None):
    done = subprocess.run([os.environ["NCCLOP_TEST_KUBECTL"], *args], input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"kubectl {' '.join(args)}: {done.stderr}")
    return done.stdout


def wait_for(what, predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    sys.exit(f"FAIL {what} (not within {timeout}s)")


def metrics_address(log_path):
    for line in Path(log_path).read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if "serving metrics" in record.get("msg", ""):
            return record.get("address")
    return None


def served_families(text):
    """{name: (type, label names)} of every family the text declares, label names from its samples."""
    families = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            families[name] = (kind, set())
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        labels = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', line.split("{", 1)[1])) if "{" in line else set()
        for family in (name, name.rsplit("_", 1)[0]):
            if family in families:
                families[family][1].update(labels - {"le"})
                break
    return families


def check_catalog(text, scrape):
    catalog = json.loads(subprocess.run([os.environ["NCCLOP_METRIC_CATALOG"]], capture_output=True, text=True,
                                        check=True).stdout)
    # leader_election_master_status is there once the election ran; the job's series once the cache holds it.
    text = wait_for("the leader election's first answer",
                    lambda: (lambda t: t if "leader_election_master_status{" in t else None)(scrape()))
    served = served_families(text)
    declared = {f["name"]: f for f in catalog}
    for name, family in declared.items():
        got = served.get(name)
        if name == "process_max_fds" and got is None:
            continue  # unlimited: not written
        check(got is not None and got[0] == family["type"],
              f"catalog family {name} ({family['type']}) is served: {got and got[0]}")
        if got and got[1]:
            check(got[1] == set(family["labels"]), f"{name}'s labels: served {sorted(got[1])}, declared {family['labels']}")
    extra = sorted(set(served) - set(declared))
    check(not extra, f"every family served is in the catalog: not declared {extra}")
    check(any(n == "leader_election_master_status" and s[1] == {"name"} for n, s in served.items()),
          "leader_election_master_status{name} with --leader-elect")
    check('controller_runtime_reconcile_total{controller="nccljob",result="success"}' in text,
          "controller_runtime_reconcile_total counts successes")
    # The chart's dashboard and alerts select only what a running operator serves.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e" / "helm"))
    import monitoring
    parser = monitoring.import_promql_parser(os.environ["NCCLOP_BUILD_DIR"])
    types = {n: t for n, (t, _) in served.items()}
    objs = monitoring.render()
    exprs = [e for _, board in monitoring.dashboards(objs) for _, e in monitoring.dashboard_exprs(board)]
    exprs += [r["expr"] for g in monitoring.rule_groups(objs) for r in g["rules"]]
    exprs += [r["expr"] for g in monitoring.rule_groups(monitoring.render("leaderElection.enabled=false")) for r in g["rules"]]
    names = set().union(*(monitoring.selected_names(parser, e) for e in exprs))
    missing = sorted(n for n in names if monitoring.family_of(n, types) is None)
    check(len(names) >= 15 and not missing,
          f"the {len(names)} metrics the dashboard and alerts select are served: missing {missing}")


def main():
    os.environ["KUBECONFIG"] = os.environ["NCCLOP_TEST_KUBECONFIG"]
    parse = import_parser()
    ns = f"metrics-{os.getpid()}"
    kubectl("apply", "--server-side", "--force-conflicts", "-f", os.environ["NCCLOP_CRD_FILE"])
    kubectl("create", "namespace", ns)
    work = tempfile.mkdtemp(prefix="ncclop-metrics-")
    log_path = os.path.join(work, "operator.log")
    with open(log_path, "w") as log:
        operator = subprocess.Popen(
            [os.environ["NCCLOP_OPERATOR_BIN"], "--kubeconfig=" + os.environ["NCCLOP_TEST_KUBECONFIG"],
             "--namespace=" + ns, "--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=0",
             "--leader-elect", "--leader-election-namespace=" + ns, "--leader-election-id=scraped-leader",
             "--log-format=json"], stdout=log, stderr=subprocess.STDOUT)
    try:
        address = wait_for("the operator serves /metrics", lambda: metrics_address(log_path))
        job = ("apiVersion: nccl.dev/v1alpha1\nkind: NcclJob\nmetadata: {name: scraped}\nspec:\n  replicas: 2\n"
               "  gpusPerPod: 0\n  template:\n    spec:\n      containers: [{name: trainer, image: t:1}]\n")
        kubectl("apply", "-n", ns, "-f", "-", stdin=job)

        def scrape():
            with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as reply:
                return reply.read().decode()

        text = wait_for("ncclop_jobs counts the job as Pending",
                        lambda: (lambda t: t if 'ncclop_jobs{state="Pending"} 1' in t else None)(scrape()))
        check_catalog(text, scrape)
        families = {f.name: f for f in parse(text)}  # raises on anything the parser cannot read
        check(True, f"prometheus_client's parser read {len(families)} metric families")

        jobs = {s.labels.get("state"): s.value for s in families["ncclop_jobs"].samples}
        check(set(jobs) == STATES, f"ncclop_jobs reports every state: {sorted(jobs)}")
        check(jobs.get("Pending") == 1 and jobs.get("Failed") == 0, f"ncclop_jobs values: {jobs}")
        empty = [(f.name, s.labels) for f in families.values() for s in f.samples
                 if any(v == "" for v in s.labels.values())]
        check(not empty, f"no empty label value: {empty}")

        info = families.get("ncclop_build_info")
        check(info is not None and any(s.labels.get("version") and s.value == 1 for s in info.samples),
              "ncclop_build_info{version} 1")
        for name in ("process_cpu_seconds", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                     "process_open_fds", "process_max_fds", "process_start_time_seconds"):
            family = families.get(name)
            check(family is not None and family.samples and family.samples[0].value > 0, f"{name} > 0")

        depth = families.get("ncclop_workqueue_depth")
        check(depth is not None and depth.samples[0].value >= 0, "ncclop_workqueue_depth")
        adds = families.get("ncclop_workqueue_adds")  # the parser drops a counter's _total
        check(adds is not None and adds.samples[0].value >= 1, "ncclop_workqueue_adds_total >= 1 (the job was queued)")
        waits = families.get("ncclop_workqueue_queue_duration_seconds")
        count = [s.value for s in waits.samples if s.name.endswith("_count")] if waits else []
        check(count and count[0] >= 1, f"ncclop_workqueue_queue_duration_seconds counted the job's waits: {count}")
        requests = families.get("ncclop_api_requests")
        by_verb = {(s.labels.get("verb"), s.labels.get("code")): s.value for s in requests.samples} if requests else {}
        check(by_verb.get(("POST", "201"), 0) >= 2, f"API requests by verb and code: the 2 pods were created: {by_verb}")
        check(any(v == "GET" and c == "200" for v, c in by_verb), f"API requests include GETs (lists): {by_verb}")
    finally:
        operator.terminate()
        operator.wait(timeout=30)
        subprocess.run([os.environ["NCCLOP_TEST_KUBECTL"], "delete", "namespace", ns, "--wait=false"],
                       capture_output=True)
    if failures:
        print(Path(log_path).read_text()[-3000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
