#!/usr/bin/env python3
"""Chaos harness: runs NcclJobs on a real local control plane, testnode and nccl-operator (a host
process), injects one kind of fault per run at a random or chosen moment, waits for the jobs to
converge and checks the invariants (invariants.py) after every run. Prints one line per run and
a table per fault kind (counts, violations, time to converge p50/p99); --json writes them too.

  tests/chaos/chaos.py --runs N [--kinds K,...] [--jobs J] [--replicas R] [--init-timeout S] [--seed S]
                       [--max-minutes M] [--build DIR] [--work DIR] [--json FILE]

Fault kinds (--kinds, default all, taken in turn):
  operator        SIGKILL the operator three times per run at random moments while the run's jobs
                  start, restart and finish; it is started again 0-1 s after each kill
  trainer-preid   SIGKILL the root trainer before it posts the id (it waits ROOT_DELAY first)
  trainer-postid  SIGKILL the root trainer after its sidecar accepted the id and annotated the root
                  pod, before the ConfigMap holds it (the operator is SIGSTOPped over that window)
  trainer-init    SIGKILL a worker's trainer while it waits for the id in nccl_k8s's init
                  (these CPU jobs have no NCCL communicator: the id exchange is their init, and
                  a barrier of all ranks after it stands in for ncclCommInitRank's blocking)
  trainer-train   SIGKILL a random rank's trainer after every rank passed the barrier (it trains)
  sidecar         SIGKILL a random pod's nccl-sidecar at a random moment (testnode restarts it)
  root-sidecar    SIGKILL the root sidecar between accepting the id and annotating the pod
                  (kube-apiserver is SIGSTOPped from before the POST until the kill, so the
                  annotation cannot land first); counts how often it costs an attempt (none
                  since the sidecar answers the POST only once the id is on the pod)
  apiserver       restart kube-apiserver at a random moment
  etcd-compact    compact etcd's whole history, then restart kube-apiserver (watches resume from a
                  compacted resourceVersion: 410 Gone, relist)
Per-job kinds hit every job of the run; the others hit the cluster once per run. A kind named
twice in --kinds runs twice as often (e.g. to give the quick kinds their counts cheaply).

Needs root (network namespaces), the build's nccl-operator, nccl-sidecar and nccl-allreduce, and
the pinned control plane (tests/harness/controlplane/build.sh). Local only: loopback and the bridge tnc<--bridge-index>.
Exit status 1 when an invariant failed in any run."""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import invariants  # noqa: E402
from cluster import ATTEMPT_LABEL, JOB_LABEL, Cluster, jobs_path, log, wait_until  # noqa: E402
from start_up import add_run_options, start  # noqa: E402

KINDS = ["operator", "trainer-preid", "trainer-postid", "trainer-init", "trainer-train", "sidecar",
         "root-sidecar", "apiserver", "etcd-compact", "evict"]
PER_JOB = {"trainer-preid", "trainer-postid", "trainer-init", "trainer-train", "sidecar", "root-sidecar", "evict"}
ROOT_DELAY = 2      # seconds the root trainer waits before it asks for the id (window for preid/init)
LINGER = 4          # seconds each trainer "trains" after it has the id (window for trainer-train)
INIT_TIMEOUT = 45   # initTimeoutSeconds (--init-timeout): bounds an attempt whose workers never get the id
CONVERGE_S = 240    # a run's jobs must be terminal this long after the fault


# In place, the attempt a start serves is its sidecar's (`GET /v1/info`), not NCCLJOB_ATTEMPT (the
# attempt the pod was made for); the sidecar binds its API once it knows it (docs/contracts.md).
SERVED_ATTEMPT = ('A=; n=0; while [ -z "$A" ]; do A=$(python3 -c \'import json, os, urllib.request as u; '
                  'print(json.load(u.urlopen(os.environ["NCCLJOB_SIDECAR_URL"] + "/v1/info", timeout=2))["attempt"])\' '
                  '2>/dev/null) || A=; if [ -z "$A" ]; then n=$((n + 1)); '
                  'if [ $n -gt $((NCCLJOB_INIT_TIMEOUT_SECONDS * 5)) ]; then exit 1; fi; sleep 0.2; fi; done; ')


def trainer_script(logs, linger=LINGER, fail_once=False, in_place=False):
    """The trainer: nccl-allreduce for the id (CPU: no NCCL communicator), then a barrier of all
    ranks in its stead (the root blocks in init until every rank joined, as ncclCommInitRank
    does; bounded by the init timeout), then `linger` seconds of "training". fail_once: rank 1
    of attempt 1 exits 1 after the barrier. testnode runs containers as host processes, so the
    trainer writes its log where the harness reads it after the pod is gone; the debug kill
    signals the container's process group. in_place: the attempt it names (logs, barrier) is the
    one its sidecar serves."""
    ready = f"{logs}/$NCCLJOB_NAME.$A.ready"
    fail = ('if [ "$A" = 1 ] && [ "$NCCLJOB_INDEX" = 1 ]; then echo "failing on purpose" >>$log; '
            'exit 1; fi; ') if fail_once else ""
    return (f'{SERVED_ATTEMPT if in_place else "A=$NCCLJOB_ATTEMPT; "}'
            f'log={logs}/$POD_NAME.$A.$POD_UID.log; '
            'echo "pod-ip $POD_IP attempt $A index $NCCLJOB_INDEX" >>$log; '
            f'if [ "$NCCLJOB_INDEX" = 0 ]; then sleep {ROOT_DELAY}; fi; '
            'nccl-allreduce --linger-seconds 0 >>$log 2>&1 || exit $?; '
            f'touch {ready}.$NCCLJOB_INDEX; n=0; '
            f'while [ "$(ls {ready}.* | wc -l)" -lt "$NCCLJOB_REPLICAS" ]; do '
            'n=$((n + 1)); if [ $n -gt $((NCCLJOB_INIT_TIMEOUT_SECONDS * 5)) ]; then '
            'echo "barrier: not every rank joined" >>$log; exit 1; fi; sleep 0.2; done; '
            'echo "barrier: every rank joined" >>$log; '
            f'{fail}sleep {linger}; echo "{invariants.TRAINER_DONE}" >>$log')


def job_object(name, replicas, build, logs, init_timeout=INIT_TIMEOUT, max_restarts=6, script=None,
               restart_strategy="Recreate"):
    env = [{"name": "PATH", "value": f"{build}/runtime:/usr/sbin:/usr/bin:/sbin:/bin"}]
    for var, path in (("POD_NAME", "metadata.name"), ("POD_UID", "metadata.uid"), ("POD_IP", "status.podIP")):
        env.append({"name": var, "valueFrom": {"fieldRef": {"fieldPath": path}}})
    return {
        "apiVersion": "nccl.dev/v1alpha1", "kind": "NcclJob", "metadata": {"name": name},
        "spec": {"replicas": replicas, "gpusPerPod": 0, "initTimeoutSeconds": init_timeout,
                 "failurePolicy": {"maxRestarts": max_restarts, "backoffSeconds": 1, "failFastExitCodes": [2],
                                   "restartStrategy": restart_strategy},
                 "template": {"spec": {"containers": [{
                     "name": "trainer", "image": "nccl-trainer:0.1.0",
                     "command": ["/bin/sh", "-c", script or trainer_script(logs, in_place=restart_strategy == "InPlace")],
                     "env": env,
                     "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}}]}}},
    }


class Run:
    """One run: its jobs, the fault, what it cost."""

    def __init__(self, cluster, number, kind, jobs, replicas, rng):
        self.c, self.number, self.kind, self.rng = cluster, number, kind, rng
        self.names = [f"r{number}-{j}" for j in range(jobs)]
        self.replicas = replicas
        self.fault_at = None
        self.injected = 0          # faults that landed where the kind says
        self.missed = []           # why a fault could not be placed (the run still counts its jobs)
        self.notes = []
        self.first_seen = None     # sidecar, evict: when the first container hit was seen running
        self.evicted = set()       # evict: the jobs one of whose pods the Eviction API took

    # ---- observation
    def pod(self, job, index):
        return self.c.api.get(f"/api/v1/namespaces/{self.c.ns}/pods/{job}-{index}")

    def attempt_pod(self, job, index, attempt):
        p = self.pod(job, index)
        if p and p["metadata"].get("labels", {}).get(ATTEMPT_LABEL) == str(attempt) \
                and not p["metadata"].get("deletionTimestamp"):
            return p
        return None

    def cm_has_id(self, job):
        cm = self.c.api.get(f"/api/v1/namespaces/{self.c.ns}/configmaps/{job}-nccl")
        return bool(cm and (cm.get("data") or {}).get("uniqueId"))

    def trainer_started(self, job, index):
        return self.attempt_pod(job, index, 1) is not None and self.c.container_running(f"{job}-{index}", "trainer")

    def state(self, job):
        obj = self.c.api.get(jobs_path(self.c.ns, job))
        return (obj or {}).get("status", {})

    # ---- faults
    def inject(self):
        k = self.kind
        if k == "operator":  # three kills per run, spread over the jobs' start, restarts and end
            for _ in range(3):
                time.sleep(self.rng.uniform(0, 4))
                self.fault_at = time.monotonic()  # converge is counted from the last kill
                self.c.kill_operator()
                time.sleep(self.rng.uniform(0, 1))
                self.c.start_operator()
                self.injected += 1
        elif k in ("apiserver", "etcd-compact"):
            time.sleep(self.rng.uniform(0, 8))
            self.fault_at = time.monotonic()
            if k == "etcd-compact":
                rev = self.c.compact_etcd()
                self.notes.append(f"compacted at revision {rev}")
            try:
                self.c.controlplane("restart-apiserver")
            except subprocess.CalledProcessError:
                # On a loaded machine the restarted API server may take longer than the 60 s
                # controlplane.sh waits; the fault happened all the same: wait for it here.
                self.notes.append("kube-apiserver ready later than controlplane.sh's 60 s")
                wait_until("kube-apiserver ready after its restart", CONVERGE_S, self.c.apiserver_ready, 1)
            self.injected = 1
        elif k == "trainer-postid":
            self.postid()
        elif k == "root-sidecar":
            self.root_sidecar()
        else:
            for job in self.names:
                getattr(self, k.replace("-", "_"))(job)

    def kill(self, job, index, container):
        if self.fault_at is None:
            self.fault_at = time.monotonic()
        if self.c.signal_container(f"{job}-{index}", container, "KILL"):
            return True
        self.missed.append(f"{job}-{index}/{container}: the node refused the kill")
        return False

    def trainer_preid(self, job):
        wait_until(f"{job}-0 trainer started", 120, lambda: self.trainer_started(job, 0))
        pod = self.attempt_pod(job, 0, 1)
        if pod is None or "accepted the root id" in self.c.container_log(pod, "nccl-sidecar"):
            self.missed.append(f"{job}: the root had posted before the kill")
            return
        if self.kill(job, 0, "trainer"):
            self.injected += 1

    def trainer_init(self, job):
        index = self.rng.randrange(1, self.replicas)
        wait_until(f"{job}-{index} trainer started", 120, lambda: self.trainer_started(job, index))
        if self.cm_has_id(job):
            self.missed.append(f"{job}: the id was out before the worker's kill")
            return
        if self.kill(job, index, "trainer"):
            self.injected += 1

    def trainer_train(self, job):
        def all_joined():
            recs = invariants.trainer_records(self.c.trainer_logs, job).get(1, {})
            return len(recs) == self.replicas and all(joined for (_, _, joined) in recs.values())
        wait_until(f"{job}: every rank past the barrier", 120, all_joined)
        if self.kill(job, self.rng.randrange(self.replicas), "trainer"):
            self.injected += 1

    def at_a_moment_of(self, job, index, container, fault):
        """Waits until `container` of pod `index` (attempt 1) runs, then until a random moment of
        the pod's life, counted from when the run first saw such a container (the jobs are taken
        one by one). False, with the miss noted, when the job ended first."""
        def running_or_over():
            if self.state(job).get("state") in ("Succeeded", "Failed"):
                return "over"
            return self.attempt_pod(job, index, 1) and self.c.container_running(f"{job}-{index}", container)
        if wait_until(f"{job}-{index} {container} started", 120, running_or_over) == "over":
            # a short job may end while the harness still hits the ones before it; waiting out
            # the 120 s here used to count as that run's time to converge
            self.missed.append(f"{job}: ended before its {fault}")
            return False
        if self.first_seen is None:
            self.first_seen = time.monotonic()
        time.sleep(max(0.0, self.first_seen + self.rng.uniform(0, ROOT_DELAY + LINGER) - time.monotonic()))
        return True

    def sidecar(self, job):
        index = self.rng.randrange(self.replicas)
        if self.at_a_moment_of(job, index, "nccl-sidecar", "sidecar's kill") and self.kill(job, index, "nccl-sidecar"):
            self.injected += 1

    def evict(self, job):
        """One pod of the job evicted through the Eviction API (what a node drain does) while its
        trainer runs: a disruption, never a restart (checked in main)."""
        index = self.rng.randrange(self.replicas)
        if not self.at_a_moment_of(job, index, "trainer", "eviction"):
            return
        if self.fault_at is None:
            self.fault_at = time.monotonic()
        pod = f"{job}-{index}"
        code, body = self.c.api.call("POST", f"/api/v1/namespaces/{self.c.ns}/pods/{pod}/eviction",
                                     {"apiVersion": "policy/v1", "kind": "Eviction",
                                      "metadata": {"name": pod, "namespace": self.c.ns}})
        if code == 201:
            self.injected += 1
            self.evicted.add(job)
        else:
            self.missed.append(f"{pod}: the Eviction API answered {code} {body.get('message', '')}")

    def postid(self):
        """Root trainers killed after their sidecar took the id, before the ConfigMap holds it. The
        operator is stopped once it made the root pods, before any root trainer can post (each
        waits ROOT_DELAY after its start; the node starts pods without the operator)."""
        for job in self.names:
            wait_until(f"{job}-0 created", 120, lambda job=job: self.attempt_pod(job, 0, 1) is not None)
        self.c.operator_proc.send_signal(signal.SIGSTOP)
        try:
            for job in self.names:
                pod = self.attempt_pod(job, 0, 1)
                try:
                    wait_until(f"{job}-0 annotated", 30, lambda pod=pod: "annotated the root pod"
                               in self.c.container_log(pod, "nccl-sidecar"))
                except TimeoutError as e:
                    self.missed.append(str(e))
                    continue
                if self.cm_has_id(job):
                    self.missed.append(f"{job}: the ConfigMap held the id before the kill")
                    continue
                if self.kill(job, 0, "trainer"):
                    self.injected += 1
        finally:
            self.c.operator_proc.send_signal(signal.SIGCONT)

    def root_sidecar(self):
        """The root sidecar killed after it accepted the id and before it annotated the pod."""
        for job in self.names:
            wait_until(f"{job}-0 trainer started", 120, lambda job=job: self.trainer_started(job, 0))
        pods = {job: self.attempt_pod(job, 0, 1) for job in self.names}
        apiserver = self.c.apiserver_pid()
        os.kill(apiserver, signal.SIGSTOP)
        try:
            for job, pod in pods.items():
                if pod is None or "annotated the root pod" in self.c.container_log(pod, "nccl-sidecar"):
                    self.missed.append(f"{job}: annotated before the API server stopped")
                    continue
                try:
                    wait_until(f"{job}-0 accepted the id", 30, lambda pod=pod: "accepted the root id"
                               in self.c.container_log(pod, "nccl-sidecar"))
                except TimeoutError as e:
                    self.missed.append(str(e))
                    continue
                if self.kill(job, 0, "nccl-sidecar"):
                    self.injected += 1
        finally:
            os.kill(apiserver, signal.SIGCONT)

    # ---- convergence
    def wait_terminal(self):
        def terminal():
            states = [self.state(j).get("state") for j in self.names]
            return all(s in ("Succeeded", "Failed") for s in states) and states
        try:
            states = wait_until(f"run {self.number}: jobs terminal", CONVERGE_S, terminal, interval=0.25)
            return states, time.monotonic() - self.fault_at
        except TimeoutError:
            return [self.state(j).get("state") for j in self.names], None


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, required=True, help="runs in all (kinds taken in turn)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated fault kinds (default all)")
    ap.add_argument("--jobs", type=int, default=2, help="NcclJobs per run (default 2)")
    ap.add_argument("--replicas", type=int, default=3, help="pods per job (default 3)")
    ap.add_argument("--init-timeout", type=int, default=INIT_TIMEOUT,
                    help=f"the jobs' initTimeoutSeconds (default {INIT_TIMEOUT})")
    ap.add_argument("--max-minutes", type=float, default=60, help="stop starting runs after this (default 60)")
    ap.add_argument("--restart-strategy", choices=("Recreate", "InPlace"), default="Recreate",
                    help="the jobs' failurePolicy.restartStrategy (InPlace: the node declares "
                         "RestartAllContainersOnContainerExits; default Recreate)")
    add_run_options(ap, "chaos", bridge_index=15)
    ap.add_argument("--json", default=None, help="write the per-run records and the summary here")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or args.runs < 1 or args.replicas < 2 or args.jobs < 1:
        ap.error(f"unknown kinds {unknown}" if unknown else "--runs >= 1, --jobs >= 1, --replicas >= 2")
    build, seed, rng, work = start(args, "chaos", "the chaos harness")
    log(f"seed {seed}, {args.runs} runs of {args.jobs} x {args.replicas}-pod jobs, kinds {kinds}, "
        f"restartStrategy {args.restart_strategy}, state {work}")
    in_place = args.restart_strategy == "InPlace"
    cluster = Cluster(work, build, bridge_index=args.bridge_index, restart_all_feature=in_place)
    started = time.monotonic()
    records, audit_offset, creates = [], 0, []
    try:
        cluster.start()
        for number in range(args.runs):
            if time.monotonic() - started > args.max_minutes * 60:
                log(f"--max-minutes {args.max_minutes} reached after {number} runs")
                break
            kind = kinds[number % len(kinds)]
            run = Run(cluster, number, kind, args.jobs, args.replicas, rng)
            for name in run.names:
                code, _ = cluster.api.call("POST", jobs_path(cluster.ns),
                                           job_object(name, args.replicas, build, cluster.trainer_logs, args.init_timeout,
                                                      restart_strategy=args.restart_strategy))
                if code != 201:
                    raise RuntimeError(f"creating {name}: HTTP {code}")
            violations = []
            try:
                run.inject()
            except TimeoutError as e:
                run.missed.append(str(e))
            if run.fault_at is None:
                run.fault_at = time.monotonic()
            states, converge = run.wait_terminal()
            if converge is None:
                violations.append(f"jobs not terminal {CONVERGE_S} s after the fault: {states}")
            if cluster.operator_exited_by_itself():
                violations.append(f"the operator exited by itself (code {cluster.operator_proc.returncode})")
                cluster.start_operator()
            new, audit_offset = invariants.pod_creates(cluster.audit_log, cluster.ns, audit_offset)
            creates += new
            attempts = {}
            for name in run.names:
                attempts[name] = run.state(name).get("attempt")
                violations += invariants.status_matches_pods(cluster.api, cluster.ns, name, creates)
                violations += invariants.ids_of_own_attempt(cluster.trainer_logs, name)
                # An evicted pod is made again, and with the gang (gangScheduling Auto) every pod.
                if in_place and name not in run.evicted:
                    violations += invariants.restarted_in_place(cluster.api, cluster.ns, name, creates,
                                                                cluster.trainer_logs)
                if name in run.evicted:
                    violations += invariants.eviction_is_a_disruption(run.state(name), name)
                # A per-job fault hits one container of the job once: it may cost that attempt, no more.
                if kind in PER_JOB and (attempts[name] or 1) > 2:
                    violations.append(f"{name}: one {kind} fault cost {attempts[name] - 1} attempts")
            uids = cluster.delete_jobs(run.names)
            try:
                wait_until(f"run {number}: nothing left", 90, lambda: not invariants.leftovers(cluster.api, cluster.ns, uids), 0.5)
            except TimeoutError:
                violations.append(f"left after deletion: {invariants.leftovers(cluster.api, cluster.ns, uids)}")
            violations += invariants.no_duplicate_pods(creates)
            record = {"run": number, "kind": kind, "injected": run.injected, "missed": run.missed,
                      "states": states, "attempts": attempts, "converge_s": converge,
                      "violations": violations, "notes": run.notes}
            records.append(record)
            print(f"run {number:4d} {kind:15s} injected {run.injected} converge "
                  f"{'-' if converge is None else f'{converge:6.1f}'} s attempts {list(attempts.values())} "
                  f"states {states} {'OK' if not violations else 'VIOLATED: ' + '; '.join(violations)}"
                  f"{' missed: ' + '; '.join(run.missed) if run.missed else ''}", flush=True)
    except SystemExit:  # SIGTERM/SIGINT: the runs so far still count
        log("interrupted; stopping after the runs done so far")
    finally:
        cluster.stop()
    summary = summarize(records, kinds)
    print_summary(summary, seed, args, time.monotonic() - started, len(creates))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": seed, "args": vars(args), "summary": summary, "runs": records}, f, indent=1)
    return 1 if any(r["violations"] for r in records) else 0


def summarize(records, kinds):
    out = {}
    for kind in kinds:
        rs = [r for r in records if r["kind"] == kind]
        conv = [r["converge_s"] for r in rs if r["converge_s"] is not None]
        extra = [sum(1 for a in r["attempts"].values() if a and a > 1) for r in rs]
        out[kind] = {"runs": len(rs), "faults": sum(r["injected"] for r in rs),
                     "missed": sum(len(r["missed"]) for r in rs),
                     "runs_violated": sum(1 for r in rs if r["violations"]),
                     "jobs_restarted": sum(extra), "jobs": sum(len(r["attempts"]) for r in rs),
                     "converge_p50_s": percentile(conv, 50), "converge_p99_s": percentile(conv, 99),
                     "converge_max_s": max(conv) if conv else None}
    return out


def print_summary(summary, seed, args, elapsed, creates):
    print(f"\nseed {seed}; {sum(s['runs'] for s in summary.values())} runs in {elapsed / 60:.1f} min; "
          f"{args.jobs} jobs x {args.replicas} pods per run; {creates} pod creates audited")
    print(f"{'kind':15s} {'runs':>5s} {'faults':>6s} {'missed':>6s} {'violated':>8s} {'jobs restarted':>15s} "
          f"{'p50 s':>6s} {'p99 s':>6s} {'max s':>6s}")
    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    for kind, s in summary.items():
        print(f"{kind:15s} {s['runs']:5d} {s['faults']:6d} {s['missed']:6d} {s['runs_violated']:8d} "
              f"{s['jobs_restarted']:>7d} of {s['jobs']:<5d} {fmt(s['converge_p50_s']):>6s} "
              f"{fmt(s['converge_p99_s']):>6s} {fmt(s['converge_max_s']):>6s}")


if __name__ == "__main__":
    sys.exit(main())
