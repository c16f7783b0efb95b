"""What the scale bench saw, and when: pure bookkeeping of pod and ConfigMap events by job and
attempt (no I/O: the watches feed it, the tests feed it by hand). Times are the bench's clock
when the event arrived."""

import threading

from kubelet_inplace import restarted_for, trainer_failed

# How each controller marks its pods: the job label, the attempt label and its first value.
OPERATOR = {"job": "nccl.dev/job-name", "attempt": "nccl.dev/attempt", "first_attempt": 1,
            "index": "nccl.dev/index"}
JOBSET = {"job": "jobset.sigs.k8s.io/jobset-name", "attempt": "jobset.sigs.k8s.io/restart-attempt",
          "first_attempt": 0, "index": "batch.kubernetes.io/job-completion-index"}


def percentile(values, q):
    """The q-th percentile (0..100) by nearest rank; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(len * q / 100), at least 1
    return ordered[min(len(ordered), int(rank)) - 1]


class Timeline:
    def __init__(self, marks, replicas_of):
        """marks: OPERATOR or JOBSET; replicas_of(job) -> the number of pods an attempt has."""
        self.marks = marks
        self.replicas_of = replicas_of
        self.lock = threading.Lock()
        # A pod restarted in place serves several attempts under one uid: what is counted per
        # attempt is keyed by (uid, attempt).
        self.pods = {}          # (uid, attempt) -> (job, attempt)
        self.running = set()    # (uid, attempt) seen serving the attempt
        self.bound = set()      # (uid, attempt) seen with a node
        self.count_bound = {}
        self.bound_at = {}      # (job, attempt) -> time the last pod of the attempt was bound
        self.ended = {}         # uid -> phase (Succeeded or Failed), first seen
        self.count = {}         # (job, attempt) -> pods seen
        self.count_running = {}
        self.count_succeeded = {}
        self.exist_at = {}      # (job, attempt) -> time the last pod of the attempt appeared
        self.running_at = {}    # (job, attempt) -> time the last pod of the attempt ran
        self.succeeded_at = {}  # (job, attempt) -> time every pod of the attempt succeeded
        self.failed_at = {}     # (job, attempt) -> time a pod of the attempt was first seen Failed
        #                         or with its trainer terminated non-zero (in place it restarts)
        self.id_at = {}         # (job, attempt) -> time its ConfigMap first held the id
        self.root_running = []  # (job, attempt, pod name) whose root (index 0) runs, in order seen
        self.names = {}         # (job, attempt, index) -> pod name

    def attempt_of(self, labels):
        """Attempt numbers start at 1 for both controllers (JobSet counts restarts from 0)."""
        raw = labels.get(self.marks["attempt"])
        if raw is None:
            return None
        return int(raw) - self.marks["first_attempt"] + 1

    def serves(self, pod):
        """Whether the pod serves the attempt its label names: Running (or ended) when made per
        attempt; moved in place (the restarts-before annotation), once its trainer runs again
        after the restarts the operator counts (kubelet_inplace.restarted_for)."""
        annotations = pod.get("metadata", {}).get("annotations") or {}
        phase = pod.get("status", {}).get("phase")
        if "nccl.dev/restarts-before-attempt" in annotations and phase == "Running":
            return restarted_for(pod, "trainer")
        return phase in ("Running", "Succeeded", "Failed")

    def on_pod(self, kind, pod, now):
        meta = pod.get("metadata", {})
        labels = meta.get("labels") or {}
        job = labels.get(self.marks["job"])
        attempt = self.attempt_of(labels)
        if job is None or attempt is None or kind == "DELETED":
            return
        uid = (meta["uid"], attempt)
        key = (job, attempt)
        want = self.replicas_of(job)
        with self.lock:
            if uid not in self.pods:
                self.pods[uid] = key
                self.names[(job, attempt, labels.get(self.marks["index"]))] = meta["name"]
                self.count[key] = self.count.get(key, 0) + 1
                if self.count[key] == want:
                    self.exist_at[key] = now
            if pod.get("spec", {}).get("nodeName") and uid not in self.bound:
                self.bound.add(uid)
                self.count_bound[key] = self.count_bound.get(key, 0) + 1
                if self.count_bound[key] == want:
                    self.bound_at[key] = now
            phase = pod.get("status", {}).get("phase")
            if self.serves(pod) and uid not in self.running:
                self.running.add(uid)
                self.count_running[key] = self.count_running.get(key, 0) + 1
                if self.count_running[key] == want:
                    self.running_at[key] = now
                if labels.get(self.marks["index"]) == "0":
                    self.root_running.append((job, attempt, meta["name"]))
            if trainer_failed(pod, "trainer") and phase != "Failed":
                self.failed_at.setdefault(key, now)
            if phase in ("Succeeded", "Failed") and uid not in self.ended:
                self.ended[uid] = phase
                if phase == "Failed":
                    self.failed_at.setdefault(key, now)
                else:
                    self.count_succeeded[key] = self.count_succeeded.get(key, 0) + 1
                    if self.count_succeeded[key] == want:
                        self.succeeded_at[key] = now

    def on_configmap(self, kind, cm, now):
        labels = cm.get("metadata", {}).get("labels") or {}
        job = labels.get(OPERATOR["job"])
        data = cm.get("data") or {}
        if job is None or kind == "DELETED" or not data.get("uniqueId") or "attempt" not in data:
            return
        with self.lock:
            self.id_at.setdefault((job, int(data["attempt"])), now)

    def take_roots(self):
        """Roots seen running since the last call (the bench posts their ids)."""
        with self.lock:
            out, self.root_running = self.root_running, []
        return out


class ProgressFollow:
    """The progress scenario's check: the steps the bench wrote on pod 0 (as its sidecar does) and
    the steps the job's status.progress showed, each with the bench's clock: every write is
    followed when the status shows its step or a later one after the write was sent."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sent = []   # (time before the patch, step)
        self.shown = []  # (time seen, step) at each change of status.progress.step

    def on_sent(self, step, now):
        with self.lock:
            self.sent.append((now, step))

    def on_job(self, kind, job, now):
        progress = (job.get("status") or {}).get("progress") or {}
        step = progress.get("step")
        if kind == "DELETED" or not isinstance(step, int):
            return
        with self.lock:
            if not self.shown or self.shown[-1][1] != step:
                self.shown.append((now, step))

    def last_shown(self):
        with self.lock:
            return self.shown[-1][1] if self.shown else None

    def lags(self, since=0.0):
        """For the writes sent at or after `since`: (seconds from each write until the status showed
        its step or a later one, the number of writes never followed)."""
        with self.lock:
            sent, shown = [s for s in self.sent if s[0] >= since], list(self.shown)
        lags, missing = [], 0
        for t, step in sent:
            seen = next((t2 for t2, s2 in shown if t2 >= t and s2 >= step), None)
            if seen is None:
                missing += 1
            else:
                lags.append(seen - t)
        return lags, missing
