#!/usr/bin/env python3
"""The scale bench's driver (bench/scale/run.sh starts the cluster and calls it): one scenario,
one controller, one size per call; appends one JSON line of results to --out.

Scenarios:
  big    one job of --pods pods: until all exist, all Running, the id published; then one rank
         fails and the next attempt is timed the same way from the failure.
  big-inplace  big with failurePolicy.restartStrategy InPlace: the bench plays each kubelet's
         restart of its pod in place (kubelet_inplace.py), as KWOK does not know the rule.
  big-nogang  big with spec.gangScheduling Disabled (the operator only): the pods are bound one
         by one as they come, as JobSet's are, instead of all at once when all exist (the
         control plane serves the scheduling.k8s.io gang API, which the default Auto uses).
  many   --jobs jobs of --replicas pods created at once: the same times per job (p50/p99).
  churn  a job of --replicas pods every 1/--rate s for --seconds; each job's trainers exit 0
         --run-for s after they run, and the bench deletes a job once it succeeded.
  progress  one job of --pods pods brought to Running (its id published), then held for two
         steady windows of --window s: (a) no progress reports; (b) the bench plays pod 0's
         sidecar with its ranks reporting every second: a merge patch of pod 0's
         nccl.dev/progress every 5 s with a rising step. Per window: the API server's requests
         by resource and verb (its /metrics apiserver_request_total), the operator's CPU, RSS,
         requests and reconciles, and whether status.progress.step followed each patch.

What is simulated: the nodes and what their kubelets would report (KWOK, stages.yaml); the
trainer's exit (the pod annotation scale.bench.nccl.dev/exit, which KWOK's pod-exit stage turns
into a terminated container); a restart in place (the bench writes the statuses the kubelet
would, kubelet_inplace.py, and plays the sidecars' exit 85 on the ConfigMap's next attempt); the
root sidecar's id post (the bench writes the id annotations
on the root pod, nccl.dev/unique-id and nccl.dev/unique-id-attempt, as the sidecar does when
the root trainer posts its id); a kubelet's removal of a deleted pod (the bench, with a uid
precondition). Real: kube-apiserver, etcd, kube-controller-manager,
kube-scheduler (binds every pod), the operator (or JobSet) as a process."""

import argparse
import base64
import concurrent.futures
import datetime
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubelet_configmaps  # noqa: E402
import kubelet_inplace  # noqa: E402
from kubeapi import Api  # noqa: E402
from track import JOBSET, OPERATOR, ProgressFollow, Timeline, percentile  # noqa: E402

EXIT = "scale.bench.nccl.dev/exit"
EXIT_AFTER = "scale.bench.nccl.dev/exit-after"
TRAINER = {"name": "trainer", "image": "trainer:1", "command": ["python", "-m", "train"]}
REMOVERS = 32  # concurrent removals of deleted pods (the kubelets' last step, simulated)
KUBELETS = 32  # pods restarted in place at once (each by its own node's kubelet, simulated)
SIDECAR = "nccl-sidecar"          # contract::kSidecarContainerName
SIDECAR_EXIT_ATTEMPT_OVER = 85    # contract::kSidecarExitAttemptOver: the ConfigMap names a later attempt
PROGRESS = "nccl.dev/progress"  # contract::kAnnotationProgress
PROGRESS_SECONDS = 5            # contract::kProgressAnnotationSeconds: pod 0's sidecar patches at most this often
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY")
READ_VERBS = ("GET", "LIST")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        time.sleep(0.1)


# ---- the process under test ----------------------------------------------------------------

class Process:
    """The controller as a process: peak RSS (VmHWM), RSS now, CPU seconds from /proc."""

    def __init__(self, argv, log_path, env=None):
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def _status(self, key):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
        return 0.0

    def peak_mib(self):
        return self._status("VmHWM")

    def rss_mib(self):
        return self._status("VmRSS")

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def start_operator(args, ns, work):
    metrics_port, health_port = free_port(), free_port()
    proc = Process([args.operator, f"--kubeconfig={args.controlplane}/kubeconfig", f"--namespace={ns}",
                    f"--metrics-bind-address=127.0.0.1:{metrics_port}",
                    f"--health-probe-bind-address=127.0.0.1:{health_port}", "--log-level=warn"],
                   f"{work}/operator.log")

    wait_ready("operator", proc, f"{work}/operator.log", health_port)
    return proc, f"http://127.0.0.1:{metrics_port}/metrics"


def wait_ready(name, proc, log, health_port):
    """Waits up to 60 s for the controller's /readyz on 127.0.0.1:health_port; fails at once if it exited."""
    def ready():
        if not proc.alive():
            raise RuntimeError(f"{name} exited; see {log}")
        try:
            return urllib.request.urlopen(f"http://127.0.0.1:{health_port}/readyz", timeout=2).status == 200
        except OSError:
            return False
    wait_for(f"{name} ready", ready, 60)


def start_jobset(args, ns, work):
    certs = f"{work}/certs"
    os.makedirs(certs, exist_ok=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-keyout", f"{certs}/tls.key", "-out", f"{certs}/tls.crt"], check=True, capture_output=True)
    health = free_port()
    # As bench/jobset/compare.sh: no webhook registered with the API server (the operator has
    # none either), leader election and metrics off; the manifests set what its defaulting
    # webhook would.
    with open(f"{work}/jobset-config.yaml", "w") as f:
        f.write(f"""apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {{leaderElect: false}}
internalCertManagement: {{enable: false}}
webhook: {{port: {free_port()}, host: 127.0.0.1, certDir: {certs}}}
metrics: {{bindAddress: "0"}}
health: {{healthProbeBindAddress: "127.0.0.1:{health}"}}
""")
    env = dict(os.environ, KUBECONFIG=f"{args.controlplane}/kubeconfig")
    proc = Process([f"{args.jobset_dir}/jobset-manager", "--config", f"{work}/jobset-config.yaml"],
                   f"{work}/jobset.log", env=env)

    wait_ready("jobset-manager", proc, f"{work}/jobset.log", health)
    return proc, None


# ---- manifests -----------------------------------------------------------------------------

def operator_job(name, replicas, gpus, annotations, strategy="Recreate", gang=None):
    """strategy: failurePolicy.restartStrategy. Recreate unless asked: the bench's nodes declare
    the in-place feature (make_nodes), so Auto would restart in place. gang: spec.gangScheduling
    (None: the default, Auto)."""
    job = {"apiVersion": "nccl.dev/v1alpha1", "kind": "NcclJob", "metadata": {"name": name},
           "spec": {"replicas": replicas, "gpusPerPod": gpus,
                    "failurePolicy": {"maxRestarts": 3, "backoffSeconds": 0, "restartStrategy": strategy},
                    "template": {"metadata": {"annotations": annotations},
                                 "spec": {"containers": [TRAINER]}}}}
    if gang:
        job["spec"]["gangScheduling"] = gang
    return job


def jobset_job(name, replicas, gpus, annotations):
    trainer = dict(TRAINER, resources={"limits": {"nvidia.com/gpu": gpus}})
    pod = {"metadata": {"annotations": annotations},
           "spec": {"restartPolicy": "Never", "containers": [trainer]}}
    job = {"parallelism": replicas, "completions": replicas, "completionMode": "Indexed",
           "backoffLimit": 0, "template": pod}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": name},
            "spec": {"network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
                     "successPolicy": {"operator": "All"},
                     "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
                     "failurePolicy": {"maxRestarts": 3, "restartStrategy": "Recreate"},
                     "replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": job}}]}}


def jobs_path(controller, ns, name=""):
    base = (f"/apis/nccl.dev/v1alpha1/namespaces/{ns}/nccljobs" if controller == "operator"
            else f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets")
    return f"{base}/{name}" if name else base


# ---- what the operator and the API server report --------------------------------------------

def parse_metrics(text):
    """Prometheus text -> {(name, frozenset(labels)): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)$', line)
        if not m:
            continue
        labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def histogram_quantile(before, after, name, q, match=None):
    """Upper bound of the bucket holding quantile q of the observations between two scrapes,
    summed over the label sets that contain `match` (a set of (label, value))."""
    buckets = {}
    for (metric, labels), value in after.items():
        if metric != name + "_bucket" or (match and not match <= labels):
            continue
        le = dict(labels)["le"]
        buckets[le] = buckets.get(le, 0) + value - before.get((metric, labels), 0)
    if not buckets:
        return None
    ordered = sorted(buckets.items(), key=lambda kv: float("inf") if kv[0] == "+Inf" else float(kv[0]))
    total = ordered[-1][1]
    if total <= 0:
        return None
    for le, cumulative in ordered:
        if cumulative >= q * total:
            return float("inf") if le == "+Inf" else float(le)
    return None


def requests_by_verb(before, after):
    out = {}
    for (metric, labels), value in after.items():
        if metric == "ncclop_api_requests_total":
            verb = dict(labels)["verb"]
            out[verb] = out.get(verb, 0) + value - before.get((metric, labels), 0)
    return {k: int(v) for k, v in out.items() if v}


def api_server_requests(before, after, verbs=WRITE_VERBS):
    """The API server's requests between two scrapes of its /metrics (apiserver_request_total),
    by "resource[/subresource] VERB", for the given verbs; only those that happened."""
    out = {}
    for (metric, labels), value in after.items():
        if metric != "apiserver_request_total":
            continue
        lab = dict(labels)
        if lab.get("verb") not in verbs:
            continue
        resource = lab.get("resource", "") + (f"/{lab['subresource']}" if lab.get("subresource") else "")
        key = f"{resource} {lab['verb']}"
        out[key] = out.get(key, 0) + value - before.get((metric, labels), 0)
    return {k: int(round(v)) for k, v in sorted(out.items()) if round(v) > 0}


def progress_annotation(attempt, step, total, loss):
    """What pod 0's sidecar writes (sidecar ProgressAnnotationValue: the keys sorted, the time as
    logging::FormatRfc3339 writes it)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    return json.dumps({"attempt": attempt, "metrics": {"loss": round(loss, 4)}, "step": step,
                       "time": stamp, "total": total}, separators=(",", ":"), sort_keys=True)


def cluster_parts():
    """The cluster's processes as run.sh names them in SCALE_PARTS ("apiserver=PID,etcd=PID,...")."""
    out = {}
    for item in filter(None, os.environ.get("SCALE_PARTS", "").split(",")):
        name, pid = item.split("=")
        out[name] = int(pid)
    return out


def cpu_of_pid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def cpu_of_parts(parts):
    out = {name: cpu_of_pid(pid) for name, pid in parts.items()}
    out["bench"] = cpu_of_pid(os.getpid())
    return out


class Sampler:
    """Every 0.5 s: the controller's RSS and, for the operator, its work-queue depth."""

    def __init__(self, proc, metrics_url):
        self.proc, self.metrics_url = proc, metrics_url
        self.samples = []  # (t, rss MiB, queue depth or None)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def scrape(self):
        if not self.metrics_url:
            return {}
        with urllib.request.urlopen(self.metrics_url, timeout=5) as r:
            return parse_metrics(r.read().decode())

    def _run(self):
        t0 = time.monotonic()
        while not self.stop.wait(0.5):
            try:
                depth = self.scrape().get(("ncclop_workqueue_depth", frozenset())) if self.metrics_url else None
                self.samples.append((time.monotonic() - t0, self.proc.rss_mib(), depth))
            except OSError:
                pass

    def max_depth(self, since=0.0):
        depths = [d for t, _, d in self.samples if d is not None and t >= since]
        return int(max(depths)) if depths else None


class Audit:
    """Requests in the API server's audit log (one JSON line per request) in one namespace,
    counted by who sent them: the operator and JobSet by user agent, JobSet's Job controller
    (inside kube-controller-manager) by its user."""

    def __init__(self, path, ns):
        self.path, self.ns = path, ns

    def mark(self):
        return os.path.getsize(self.path) if self.path and os.path.exists(self.path) else 0

    def count(self, start, end, with_latency=False):
        """Requests by "who verb"; with_latency, also the API server's own time for them
        (stageTimestamp - requestReceivedTimestamp), p50/p99 by "who verb"."""
        counts, seconds = {}, {}
        if not self.path or end < start:  # no log, or the API server rotated it in between
            return (counts, {}) if with_latency else counts
        with open(self.path, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
        for line in data.splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if (e.get("objectRef") or {}).get("namespace") != self.ns:
                continue
            ua = e.get("userAgent", "")
            user = e.get("user", {}).get("username", "")
            who = ("operator" if ua.startswith("nccl-operator") else "jobset" if ua.startswith("jobset") else
                   "jobctl" if user.endswith(":job-controller") else None)
            if who:
                key = f"{who} {e.get('verb', '?')}"
                counts[key] = counts.get(key, 0) + 1
                took = served_seconds(e)
                if took is not None:
                    seconds.setdefault(key, []).append(took)
        if not with_latency:
            return counts
        latency = {k: {"p50": round(percentile(v, 50), 3), "p99": round(percentile(v, 99), 3)}
                   for k, v in seconds.items()}
        return counts, latency


def served_seconds(event):
    """An audit event's time inside the API server (RFC 3339 times with microseconds)."""
    try:
        t0 = datetime.datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00"))
        t1 = datetime.datetime.fromisoformat(event["stageTimestamp"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return None
    return (t1 - t0).total_seconds()


def quiet(audit, seconds=2.0, timeout=60):
    """Waits until the audit log stops growing for `seconds` (the controllers' last writes)."""
    deadline = time.monotonic() + timeout
    last, since = audit.mark(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        n = audit.mark()
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return


# ---- the scenarios ---------------------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        env = dict(line.replace("export ", "", 1).strip().split("=", 1)
                   for line in open(f"{args.controlplane}/env") if "=" in line)
        self.api = Api(env["APISERVER_URL"], f"{args.controlplane}/pki")
        self.ns = f"scale-{args.controller}-{args.scenario}-{os.getpid()}"
        self.work = tempfile.mkdtemp(prefix="scale-")
        self.replicas = {}
        marks = OPERATOR if args.controller == "operator" else JOBSET
        self.timeline = Timeline(marks, lambda job: self.replicas.get(job, 0))
        self.created_at = {}
        self.removing = set()  # uids of pods the bench removes (finish_deletion)
        self.stop = threading.Event()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=8)
        # The kubelets' removals: each node removes its own pods, in parallel across nodes; one
        # pool of 8 shared with the bench's other calls made the removal of a 4096-pod attempt
        # the slowest part of a restart.
        self.removal_pool = concurrent.futures.ThreadPoolExecutor(max_workers=REMOVERS)
        self.in_place = args.scenario == "big-inplace"
        self.kubelet_pool = concurrent.futures.ThreadPoolExecutor(max_workers=KUBELETS)
        self.kubelet_tasks = []          # futures of the restarts in place the bench plays
        self.restarted_during = {}       # (job, index) -> the attempt during which its pod last restarted
        self.moved_to = {}               # job -> the latest attempt whose sidecar exits were played
        self.kubelet_writes = 0          # status writes the bench made as the kubelets (each a GET and a PATCH)
        # The kubelets' reads of the ConfigMaps their pods refer to (kubelet_configmaps.py).
        self.configmaps = kubelet_configmaps.Kubelets(self.api, self.ns, KUBELETS, self.log)

    def log(self, msg):
        print(f"[scale {time.strftime('%H:%M:%S')}] {self.args.controller} {self.args.scenario}: {msg}",
              file=sys.stderr, flush=True)

    # watches and the simulated root sidecar
    def start_watches(self):
        def on_pod(kind, pod):
            self.timeline.on_pod(kind, pod, time.monotonic())
            self.finish_deletion(kind, pod)
            self.configmaps.on_pod(kind, pod)
        threading.Thread(target=self.api.watch, daemon=True,
                         args=(f"/api/v1/namespaces/{self.ns}/pods", on_pod, self.stop)).start()
        if self.args.controller == "operator":
            def on_configmap(kind, cm):
                self.timeline.on_configmap(kind, cm, time.monotonic())
                if self.in_place:
                    self.sidecars_see(kind, cm)
            threading.Thread(target=self.api.watch, daemon=True,
                             args=(f"/api/v1/namespaces/{self.ns}/configmaps", on_configmap, self.stop)).start()
            threading.Thread(target=self.post_ids, daemon=True).start()

    def finish_deletion(self, kind, pod):
        """Plays the kubelet's last step for a pod being deleted: it is removed for good (grace 0)
        with a precondition on its uid, as a kubelet does. KWOK v0.8.0 removes by name alone
        (pod_controller.go), so under load a late removal of attempt N's pod hit attempt N+1's
        pod of the same name (the operator's pod names are deterministic)."""
        meta = pod.get("metadata", {})
        if kind == "DELETED" or not meta.get("deletionTimestamp"):
            return
        with self.timeline.lock:
            if meta["uid"] in self.removing:
                return
            self.removing.add(meta["uid"])
        body = {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}}
        self.removal_pool.submit(self.api.request, "DELETE", f"/api/v1/namespaces/{self.ns}/pods/{meta['name']}", body)

    # restarts in place, played for KWOK's nodes (kubelet_inplace.py says what a kubelet writes)
    def restart_in_place(self, job, index, attempt, container, code):
        """Plays the pod's kubelet for one restart in place after `container` exited with `code`:
        each of the five statuses as its status manager writes it (GET the pod, then PATCH
        pods/status with the uid as precondition)."""
        pod = self.timeline.names[(job, 1, index)]
        path = f"/api/v1/namespaces/{self.ns}/pods/{pod}"
        with self.timeline.lock:
            self.restarted_during[(job, index)] = attempt
        for write in kubelet_inplace.writes(container, code):
            status, current = self.api.request("GET", path)
            if status != 200:
                self.log(f"restart in place of {pod}: GET {status}")
                return
            self.api.merge_patch(path + "/status", {"metadata": {"uid": current["metadata"]["uid"]},
                                                    "status": write(current)})
            with self.timeline.lock:
                self.kubelet_writes += 1

    def play_restart(self, job, index, attempt, container, code):
        future = self.kubelet_pool.submit(self.restart_in_place, job, index, attempt, container, code)
        with self.timeline.lock:
            self.kubelet_tasks.append(future)

    def sidecars_see(self, kind, cm):
        """Plays every sidecar of the job on its ConfigMap: once it names a later attempt than
        the one a sidecar serves, that sidecar exits 85 and its rule restarts the pod; a pod that
        already restarted during the attempt that ended waits instead and takes up the new one
        as it is (docs/DESIGN.md, "Restarting an attempt in place")."""
        job = (cm.get("metadata", {}).get("labels") or {}).get(OPERATOR["job"])
        raw = (cm.get("data") or {}).get("attempt")
        if kind == "DELETED" or job is None or not raw:
            return
        attempt = int(raw)
        with self.timeline.lock:
            if attempt <= self.moved_to.get(job, 1):
                return
            self.moved_to[job] = attempt
            exits = kubelet_inplace.sidecar_exits(self.replicas.get(job, 0), attempt, job, self.restarted_during)
        for index in exits:
            self.play_restart(job, index, attempt, SIDECAR, SIDECAR_EXIT_ATTEMPT_OVER)

    def kubelets_idle(self):
        with self.timeline.lock:
            return all(f.done() for f in self.kubelet_tasks)

    def post_ids(self):
        """Plays the root pod's sidecar: once the root runs, its trainer's id is written on the
        root pod (what the sidecar does on POST /v1/id), for the operator to publish."""
        while not self.stop.is_set():
            for job, attempt, pod in self.timeline.take_roots():
                fake_id = base64.b64encode(os.urandom(128)).decode()
                patch = {"metadata": {"annotations": {"nccl.dev/unique-id": fake_id,
                                                      "nccl.dev/unique-id-attempt": str(attempt)}}}
                self.pool.submit(self._patch_quietly, f"/api/v1/namespaces/{self.ns}/pods/{pod}", patch)
            time.sleep(0.05)

    def _patch_quietly(self, path, patch):
        try:
            self.api.merge_patch(path, patch)
        except RuntimeError as e:  # the pod may be gone already (a restart)
            self.log(f"post skipped: {e}")

    def create_jobs(self, names, replicas, annotations=None):
        for n in names:
            self.replicas[n] = replicas

        def create(name):
            if self.args.controller == "operator":
                job = operator_job(name, replicas, self.args.gpus_per_pod, annotations or {},
                                   "InPlace" if self.in_place else "Recreate",
                                   "Disabled" if self.args.scenario == "big-nogang" else None)
            else:
                job = jobset_job(name, replicas, self.args.gpus_per_pod, annotations or {})
            self.api.create(jobs_path(self.args.controller, self.ns), job)
            self.created_at[name] = time.monotonic()
        list(self.pool.map(create, names))

    def fail_one_rank(self, names, replicas):
        """Rank replicas/2's trainer exits 1: KWOK ends its pod (the exit annotation), or in place
        its kubelet restarts the pod (played by the bench)."""
        index = str(replicas // 2)
        if self.in_place:
            for name in names:
                self.play_restart(name, index, 1, "trainer", 1)
            return
        for name in names:
            pod = self.timeline.names[(name, 1, index)]
            self.pool.submit(self.api.merge_patch, f"/api/v1/namespaces/{self.ns}/pods/{pod}",
                             {"metadata": {"annotations": {EXIT: "1"}}})

    def attempt_done(self, names, attempt):
        tl = self.timeline
        with tl.lock:
            return all((n, attempt) in tl.running_at and (self.args.controller != "operator" or (n, attempt) in tl.id_at)
                       for n in names)

    def times(self, names, attempt, start_of):
        tl = self.timeline
        out = {}
        for what, table in (("exist", tl.exist_at), ("bound", tl.bound_at), ("running", tl.running_at),
                            ("id", tl.id_at)):
            vals = [table[(n, attempt)] - start_of(n) for n in names if (n, attempt) in table]
            if vals:
                out[what] = {"p50": round(percentile(vals, 50), 2), "p99": round(percentile(vals, 99), 2),
                             "max": round(max(vals), 2), "n": len(vals)}
        return out

    def run_phase(self, proc, sampler, audit, body):
        """Runs body(); returns what the controller spent on it."""
        cpu0, mark0, t0 = proc.cpu_seconds(), audit.mark(), time.monotonic()
        parts = cluster_parts()
        parts0, s0, writes0 = cpu_of_parts(parts), self.api_server_metrics(), self.kubelet_writes
        reads0 = self.configmaps.reads
        m0 = sampler.scrape()
        body()
        elapsed = time.monotonic() - t0
        # The played kubelets' last writes (a pod's Ready) may follow the attempt's start.
        wait_for("the played kubelets' writes done", self.kubelets_idle, 120)
        wait_for("the played kubelets' ConfigMap reads done", self.configmaps.done, 120)
        parts1 = cpu_of_parts(parts)
        cluster_cpu = {k: round(parts1[k] - parts0[k], 1) for k in parts1}
        quiet(audit)
        m1 = sampler.scrape()
        counts, latency = audit.count(mark0, audit.mark(), with_latency=True)
        out = {"seconds": round(elapsed, 2), "cpu_s": round(proc.cpu_seconds() - cpu0, 2),
               "audit": counts, "server_latency_s": latency, "cluster_cpu_s": cluster_cpu,
               "queue_depth_max": sampler.max_depth(t0 - sampler.t0)}
        # Every request of the cluster (the controllers', KWOK's, the bench's as the kubelets).
        s1 = self.api_server_metrics()
        out["api_writes"] = api_server_requests(s0, s1)
        out["api_reads"] = api_server_requests(s0, s1, READ_VERBS)
        out["kubelet_status_writes"] = self.kubelet_writes - writes0
        out["kubelet_configmap_reads"] = self.configmaps.reads - reads0
        if self.configmaps.failed:
            out["kubelet_configmap_read_failures"] = self.configmaps.failed
        if m1:
            out["requests_by_verb"] = requests_by_verb(m0, m1)
            p99 = histogram_quantile(m0, m1, "ncclop_api_request_duration_seconds", 0.99)
            out["api_latency_p99_s"] = p99
            def delta(name):
                return round(m1.get((name, frozenset()), 0) - m0.get((name, frozenset()), 0), 2)
            out["reconciles"] = int(delta("ncclop_reconcile_total"))
            out["reconcile_seconds"] = delta("ncclop_reconcile_duration_seconds_sum")
        return out

    def run(self):
        a = self.args
        self.api.create("/api/v1/namespaces", {"metadata": {"name": self.ns}})
        start = start_operator if a.controller == "operator" else start_jobset
        proc, metrics_url = start(a, self.ns, self.work)
        sampler = Sampler(proc, metrics_url)
        sampler.t0 = time.monotonic()
        audit = Audit(a.audit, self.ns)
        self.start_watches()
        result = {"controller": a.controller, "scenario": a.scenario, "size": a.size,
                  "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        try:
            getattr(self, "scenario_" + a.scenario.replace("-", "_"))(proc, sampler, audit, result)
            result["peak_rss_mib"] = round(proc.peak_mib(), 1)
            result["rss_curve"] = [(round(t, 1), round(r, 1)) for t, r, _ in sampler.samples[::4]]
        except Exception as e:
            # What was seen is still a result: the times reached, the figures so far, the error.
            result["error"] = f"{type(e).__name__}: {e}"
            result["peak_rss_mib"] = round(proc.peak_mib(), 1)
            result.setdefault("create", {}).setdefault("times", self.times(
                list(self.replicas), 1, lambda n: self.created_at.get(n, 0)))
            if "restart" not in result and self.timeline.failed_at:
                result["restart"] = {"times": self.times(
                    [n for n in self.replicas if (n, 1) in self.timeline.failed_at], 2,
                    lambda n: self.timeline.failed_at[(n, 1)])}
            self.partial = result
            tl = self.timeline
            self.log(f"state: pods seen {dict(tl.count)}, bound {dict(tl.count_bound)}, "
                     f"running {dict(tl.count_running)}, ids {sorted(tl.id_at)}, failed {sorted(tl.failed_at)}")
            for phase, attempt, start_of in (("create", 1, lambda n: self.created_at[n]),):
                self.log(f"{phase} so far: {self.times(list(self.replicas), attempt, start_of)}")
            with open(proc.log.name) as f:
                self.log("last lines of the controller's log:\n" + "".join(f.readlines()[-15:]))
            raise
        finally:
            sampler.stop.set()
            proc.stop()
            # The namespace's pods are deleted by kube-controller-manager and removed by the
            # bench (finish_deletion): it watches until they are gone.
            self.api.delete(f"/api/v1/namespaces/{self.ns}")
            wait_for("the namespace's pods gone", self.no_pods_left, 600)
            self.stop.set()
        return result

    def api_server_metrics(self):
        return parse_metrics(self.api.text("/metrics"))

    def steady_window(self, proc, sampler, audit, name, seconds, pod=None, follow=None):
        """Holds the running job for `seconds`; with `pod`, plays its sidecar: a merge patch of
        its progress annotation every PROGRESS_SECONDS, the step rising by one a second (its ranks
        report every second). Returns what the window cost."""
        parts = cluster_parts()
        parts0, s0, m0 = cpu_of_parts(parts), self.api_server_metrics(), sampler.scrape()
        cpu0, rss0, mark0 = proc.cpu_seconds(), proc.rss_mib(), audit.mark()
        t0 = time.monotonic()
        since = t0 - sampler.t0
        patches, failed, due = 0, 0, t0
        while time.monotonic() < t0 + seconds:
            now = time.monotonic()
            if pod and now >= due:
                self.progress_step += PROGRESS_SECONDS
                value = progress_annotation(1, self.progress_step, 1_000_000, 4.0 / (1 + self.progress_step / 1000))
                follow.on_sent(self.progress_step, now)
                try:
                    self.api.merge_patch(f"/api/v1/namespaces/{self.ns}/pods/{pod}",
                                         {"metadata": {"annotations": {PROGRESS: value}}})
                    patches += 1
                except RuntimeError as e:
                    failed += 1
                    self.log(f"progress patch failed: {e}")
                due += PROGRESS_SECONDS
            time.sleep(max(0.0, min(0.1, t0 + seconds - time.monotonic())))
        elapsed = time.monotonic() - t0
        cpu1, rss1, s1, m1 = proc.cpu_seconds(), proc.rss_mib(), self.api_server_metrics(), sampler.scrape()
        parts1 = cpu_of_parts(parts)
        rss = [r for t, r, _ in sampler.samples if t >= since] + [rss0, rss1]
        out = {"name": name, "reports": bool(pod), "seconds": round(elapsed, 2),
               "api_writes": api_server_requests(s0, s1), "api_reads": api_server_requests(s0, s1, READ_VERBS),
               "cpu_s": round(cpu1 - cpu0, 2), "rss_mib_start": round(rss0, 1), "rss_mib_end": round(rss1, 1),
               "rss_mib_max": round(max(rss), 1), "audit": audit.count(mark0, audit.mark()),
               "cluster_cpu_s": {k: round(parts1[k] - parts0[k], 1) for k in parts1},
               "patches": patches, "patches_failed": failed}
        if m1:
            out["requests_by_verb"] = requests_by_verb(m0, m1)
            out["reconciles"] = int(m1.get(("ncclop_reconcile_total", frozenset()), 0)
                                    - m0.get(("ncclop_reconcile_total", frozenset()), 0))
            out["reconcile_seconds"] = round(m1.get(("ncclop_reconcile_duration_seconds_sum", frozenset()), 0)
                                             - m0.get(("ncclop_reconcile_duration_seconds_sum", frozenset()), 0), 3)
        if pod:
            # The last patch's status write may come after the window: waited for, not counted.
            try:
                wait_for("status.progress.step at the last step written",
                         lambda: (follow.last_shown() or 0) >= self.progress_step, 30)
            except TimeoutError as e:
                self.log(str(e))
            lags, missing = follow.lags(since=t0)
            out["followed"] = {"sent": len(lags) + missing, "shown": len(lags), "missing": missing,
                               "lag_p50_s": round(percentile(lags, 50), 3) if lags else None,
                               "lag_max_s": round(max(lags), 3) if lags else None,
                               "last_step_sent": self.progress_step, "last_step_shown": follow.last_shown()}
        self.log(f"window {name}: {out}")
        return out

    def pod_bytes(self, job):
        """The size of one pod of the job's first attempt as the API server serves it (JSON,
        status and managedFields included): what every watcher of pods decodes per event."""
        first = self.timeline.marks["first_attempt"]
        name = self.timeline.names.get((job, 1, "0")) or self.timeline.names.get((job, first, "0"))
        if not name:
            return None
        code, pod = self.api.request("GET", f"/api/v1/namespaces/{self.ns}/pods/{name}")
        return len(json.dumps(pod, separators=(",", ":"))) if code == 200 else None

    def no_pods_left(self):
        code, listed = self.api.request("GET", f"/api/v1/namespaces/{self.ns}/pods?limit=1")
        return code == 200 and not listed.get("items")

    def scenario_big(self, proc, sampler, audit, result):
        self.scenario_many(proc, sampler, audit, result, jobs=1, replicas=self.args.pods)

    def scenario_big_inplace(self, proc, sampler, audit, result):
        if self.args.controller != "operator":
            raise ValueError("big-inplace: the operator only (bench/restart compares JobSet's on a real node)")
        result["restart_strategy"] = "InPlace"
        self.scenario_big(proc, sampler, audit, result)

    def scenario_big_nogang(self, proc, sampler, audit, result):
        if self.args.controller != "operator":
            raise ValueError("big-nogang: the operator only (JobSet's pods have no gang here)")
        result["gang_scheduling"] = "Disabled"
        self.scenario_big(proc, sampler, audit, result)

    def scenario_many(self, proc, sampler, audit, result, jobs=None, replicas=None):
        a = self.args
        jobs = jobs or a.jobs
        replicas = replicas or a.replicas
        names = [f"job-{i}" for i in range(jobs)]
        result.update(jobs=jobs, replicas=replicas, pods=jobs * replicas)

        def first():
            self.create_jobs(names, replicas)
            self.log(f"{jobs} jobs x {replicas} pods created")
            wait_for("first attempts running (and ids published)", lambda: self.attempt_done(names, 1), a.timeout)
        result["create"] = self.run_phase(proc, sampler, audit, first)
        result["create"]["times"] = self.times(names, 1, lambda n: self.created_at[n])
        result["pod_bytes"] = self.pod_bytes(names[0])
        self.log(f"first attempts: {result['create']['times']}")

        def restart():
            self.fail_one_rank(names, replicas)
            wait_for("next attempts running (and ids published)", lambda: self.attempt_done(names, 2), a.timeout)
        result["restart"] = self.run_phase(proc, sampler, audit, restart)
        result["restart"]["times"] = self.times(names, 2, lambda n: self.timeline.failed_at[(n, 1)])
        self.log(f"restarts: {result['restart']['times']}")

    def scenario_progress(self, proc, sampler, audit, result):
        a = self.args
        if a.controller != "operator":
            raise ValueError("progress: the operator only (status.progress is the NcclJob's)")
        name = "job-0"
        result.update(jobs=1, replicas=a.pods, pods=a.pods, window_s=a.window)
        follow = ProgressFollow()
        threading.Thread(target=self.api.watch, daemon=True,
                         args=(jobs_path("operator", self.ns), lambda kind, job: follow.on_job(kind, job, time.monotonic()),
                               self.stop)).start()

        def first():
            self.create_jobs([name], a.pods)
            wait_for("all pods running and the id published", lambda: self.attempt_done([name], 1), a.timeout)
        result["create"] = self.run_phase(proc, sampler, audit, first)
        result["create"]["times"] = self.times([name], 1, lambda n: self.created_at[n])
        self.log(f"first attempt: {result['create']['times']}")
        quiet(audit, seconds=2, timeout=30)  # the operator's last status writes of the start
        time.sleep(5)
        pod = self.timeline.names[(name, 1, "0")]
        self.progress_step = 0
        result["windows"] = [
            self.steady_window(proc, sampler, audit, "no reports", a.window),
            self.steady_window(proc, sampler, audit, "reports", a.window, pod=pod, follow=follow)]
        followed = result["windows"][1]["followed"]
        if followed["missing"] or followed["last_step_shown"] != followed["last_step_sent"]:
            raise AssertionError(f"status.progress did not follow pod 0's reports: {followed}")

    def scenario_churn(self, proc, sampler, audit, result):
        a = self.args
        annotations = {EXIT: "0", EXIT_AFTER: f"{a.run_for}s"}
        names, finished = [], []
        result.update(replicas=a.replicas, rate_jobs_per_s=a.rate, seconds=a.seconds, run_for_s=a.run_for)

        def reap():
            """Deletes each job once every pod of its attempt succeeded (as a TTL would)."""
            with self.timeline.lock:
                done = [n for n in names if n not in finished and (n, 1) in self.timeline.succeeded_at]
            for n in done:
                finished.append(n)
                self.pool.submit(self.api.delete, jobs_path(a.controller, self.ns, n))

        def body():
            t0 = time.monotonic()
            i = 0
            while time.monotonic() - t0 < a.seconds:
                due = t0 + i / a.rate
                if time.monotonic() >= due:
                    name = f"job-{i}"
                    names.append(name)
                    self.pool.submit(self.create_jobs, [name], a.replicas, annotations)
                    i += 1
                reap()
                time.sleep(0.02)
            self.log(f"{len(names)} jobs created; waiting for the last to finish")
            wait_for("every churn job finished", lambda: (reap(), len(finished) == len(names))[1],
                     a.run_for + a.timeout)
        result["churn"] = self.run_phase(proc, sampler, audit, body)
        result["churn"]["jobs"] = len(names)
        result["churn"]["times"] = self.times(names, 1, lambda n: self.created_at[n])
        result["churn"]["rss_mib_p50"] = percentile([r for _, r, _ in sampler.samples], 50)


def make_nodes(args):
    """Fake nodes of KWOK (annotation kwok.x-k8s.io/node=fake): --gpus nvidia.com/gpu each. The
    API server taints a new node not-ready (TaintNodesByCondition); the node lifecycle
    controller, which is not run here, would lift it once the node is Ready: the bench lifts it.
    Each declares what a v1.37.2 kubelet with its default gates declares for restarts in place
    (status.declaredFeatures, kubelet_node_declared_features.go): the scheduler's
    NodeDeclaredFeatures filter (GA in 1.37) places a pod with a RestartAllContainers rule only on
    such a node."""
    env = dict(line.replace("export ", "", 1).strip().split("=", 1)
               for line in open(f"{args.controlplane}/env") if "=" in line)
    api = Api(env["APISERVER_URL"], f"{args.controlplane}/pki")
    capacity = {"cpu": "128", "memory": "2Ti", "pods": "110", "ephemeral-storage": "10Ti",
                "nvidia.com/gpu": str(args.gpus)}

    def make(i):
        name = f"kwok-node-{i}"
        code, _ = api.request("POST", "/api/v1/nodes", {
            "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {"type": "kwok", "kubernetes.io/hostname": name}},
            "status": {"capacity": capacity, "allocatable": capacity,
                       "declaredFeatures": [kubelet_inplace.NODE_FEATURE]}})
        if code not in (201, 409):
            raise RuntimeError(f"node {name}: {code}")
        api.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"taints": None}})
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(make, range(args.nodes)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["nodes", "big", "big-inplace", "big-nogang", "many", "churn", "progress"])
    p.add_argument("--controlplane", required=True, help="the control plane's dir (tests/harness/controlplane)")
    p.add_argument("--controller", choices=["operator", "jobset"], default="operator")
    p.add_argument("--operator", help="the nccl-operator binary")
    p.add_argument("--jobset-dir", help="bench/jobset/build.sh's output dir")
    p.add_argument("--audit", help="the API server's audit log")
    p.add_argument("--out", help="append the result as one JSON line here")
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--gpus", type=int, default=8, help="nvidia.com/gpu per node")
    p.add_argument("--gpus-per-pod", type=int, default=1)
    p.add_argument("--pods", type=int, default=4096, help="big, progress: pods of the one job")
    p.add_argument("--window", type=float, default=60, help="progress: seconds of each steady window")
    p.add_argument("--jobs", type=int, default=500, help="many: jobs created at once")
    p.add_argument("--replicas", type=int, default=8, help="many, churn: pods per job")
    p.add_argument("--rate", type=float, default=1.0, help="churn: jobs created per second")
    p.add_argument("--seconds", type=float, default=600, help="churn: how long jobs are created")
    p.add_argument("--run-for", type=float, default=20, help="churn: seconds a job's trainers run")
    p.add_argument("--timeout", type=float, default=600, help="deadline of each wait, seconds")
    p.add_argument("--size", type=float, default=1.0, help="recorded with the result: the fraction of full scale")
    a = p.parse_args()
    if a.command == "nodes":
        make_nodes(a)
        return
    a.scenario = a.command
    bench = Bench(a)
    try:
        result = bench.run()
    finally:
        partial = getattr(bench, "partial", None)
        if partial is not None and a.out:
            with open(a.out, "a") as f:
                f.write(json.dumps(partial) + "\n")
    line = json.dumps(result)
    if a.out:
        with open(a.out, "a") as f:
            f.write(line + "\n")
    print(line)


if __name__ == "__main__":
    main()
