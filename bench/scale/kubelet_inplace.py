"""What a kubelet (v1.37.2) writes to a pod's status when a container's RestartAllContainers rule
fires: the scale bench plays it on KWOK nodes, which do not know the rule. Pure: each function
takes the pod as the API server serves it and returns the status of one write; no I/O.

Counted from the kubelet's sources (k8s.io/kubernetes v1.37.2), not measured on a real node:
every sync of the pod worker hands the status manager a new status (status_manager.go
SetPodStatus); the status manager writes each status that changed with one GET of the pod and one
PATCH of pods/status (syncPod), and only statuses produced before that goroutine's next pass
coalesce. One restart is five syncs whose statuses differ, each after a relist, a requeue or a
probe, so five writes:

  1. exited     the container whose rule fired lies terminated (its code), the pod's
                AllContainersRestarting condition True (status/generate.go), Ready False;
  2. removed    SyncPod killed and removed every container and requeued the pod (kubelet.go): each
                container Waiting (reason RestartingAllContainers), its last state terminated with
                137, its restartCount + 1 (kubelet_pods.go); the condition False again (every
                container cleaned up); the phase Pending;
  3. sidecar    the next relist sees the native sidecar (init container, restartPolicy Always)
                running and started; the trainer is started in that sync, still Waiting here;
  4. trainer    the next relist sees the trainer running; phase Running;
  5. ready      the sidecar's readiness probe passes (prober SetContainerReadiness): Ready True.
Had the probe passed before the trainer ran, the sidecar's readiness would be one write and the
trainer's start (the pod Ready with it) the next: five all the same.
"""

import copy
import datetime

RESTARTING = "RestartingAllContainers"  # the kubelet's reason (kubelet_pods.go)
CONDITION = "AllContainersRestarting"   # v1.AllContainersRestarting
KILLED_CODE = 137
STEPS = ("exited", "removed", "sidecar", "trainer", "ready")
# What a node declares (status.declaredFeatures) when its kubelet restarts pods in place
# (component-helpers nodedeclaredfeatures/features/restartallcontainers).
NODE_FEATURE = "RestartAllContainersOnContainerExits"


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _conditions(status, ready, restarting, now):
    """The pod's conditions with Ready/ContainersReady and AllContainersRestarting set; the
    others (PodScheduled, Initialized, ...) as they were."""
    keep = [c for c in status.get("conditions") or []
            if c.get("type") not in ("Ready", "ContainersReady", CONDITION)]
    value = "True" if ready else "False"
    out = keep + [{"type": "Ready", "status": value, "lastTransitionTime": now},
                  {"type": "ContainersReady", "status": value, "lastTransitionTime": now}]
    cond = {"type": CONDITION, "status": "True" if restarting else "False", "lastTransitionTime": now}
    if restarting:
        cond.update(reason="RestartAllContainersStarted", message="container exited with restart policy rule")
    return out + [cond]


def _sidecars(status):
    return status.get("initContainerStatuses") or []


def _mains(status):
    return status.get("containerStatuses") or []


def _status_of(pod):
    return copy.deepcopy(pod.get("status") or {})


def exited(pod, container, code, now=None):
    """Write 1: `container` (a main container or the sidecar) terminated with `code`."""
    now = now or now_rfc3339()
    status = _status_of(pod)
    for cs in _mains(status) + _sidecars(status):
        cs["ready"] = False
        if cs.get("name") == container:
            started = (cs.get("state") or {}).get("running", {}).get("startedAt", now)
            cs["state"] = {"terminated": {"exitCode": code, "reason": "Error" if code else "Completed",
                                          "startedAt": started, "finishedAt": now}}
            cs["started"] = False
    status["conditions"] = _conditions(status, ready=False, restarting=True, now=now)
    return status


def removed(pod, now=None):
    """Write 2: every container removed for the restart, each restartCount + 1."""
    now = now or now_rfc3339()
    status = _status_of(pod)
    for cs in _mains(status) + _sidecars(status):
        cs.update(ready=False, started=False, restartCount=int(cs.get("restartCount", 0)) + 1,
                  state={"waiting": {"reason": RESTARTING,
                                     "message": "The container is removed because RestartAllContainers in place"}},
                  lastState={"terminated": {"exitCode": KILLED_CODE, "reason": RESTARTING, "finishedAt": now}})
    status["conditions"] = _conditions(status, ready=False, restarting=False, now=now)
    status["phase"] = "Pending"
    return status


def _run(cs, now):
    cs.update(started=True, state={"running": {"startedAt": now}})


def sidecar_running(pod, now=None):
    """Write 3: the native sidecar runs again; the trainer is being started."""
    now = now or now_rfc3339()
    status = _status_of(pod)
    for cs in _sidecars(status):
        _run(cs, now)
    for cs in _mains(status):
        cs["state"] = {"waiting": {"reason": "PodInitializing"}}
    status["conditions"] = _conditions(status, ready=False, restarting=False, now=now)
    return status


def trainer_running(pod, now=None):
    """Write 4: every container runs again; phase Running, not Ready yet."""
    now = now or now_rfc3339()
    status = _status_of(pod)
    for cs in _mains(status):
        _run(cs, now)
    status["phase"] = "Running"
    return status


def ready(pod, now=None):
    """Write 5: the sidecar's readiness probe passed: the pod is Ready."""
    now = now or now_rfc3339()
    status = _status_of(pod)
    for cs in _mains(status) + _sidecars(status):
        cs["ready"] = True
    status["conditions"] = _conditions(status, ready=True, restarting=False, now=now)
    return status


def writes(container, code):
    """The five writes of one restart, in order: functions pod -> status."""
    return [lambda pod: exited(pod, container, code), removed, sidecar_running, trainer_running, ready]


def restarted_for(pod, trainer):
    """Whether the pod serves the attempt its labels name, in place: its trainer runs and has
    restarted at least `nccl.dev/restarts-before-attempt` times (as policy::DecidePublish reads
    it); a pod without that annotation (made per attempt) serves its attempt once it runs."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    before = int(annotations.get("nccl.dev/restarts-before-attempt", "0") or 0)
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    for cs in _mains(status):
        if cs.get("name") == trainer:
            return "running" in (cs.get("state") or {}) and int(cs.get("restartCount", 0)) >= before
    return False


def trainer_failed(pod, trainer):
    """The trainer lies terminated with a code other than 0 (its pod is Failed, or restarts)."""
    for cs in _mains(pod.get("status") or {}):
        term = (cs.get("state") or {}).get("terminated")
        if cs.get("name") == trainer and term and int(term.get("exitCode", 0)) != 0:
            return True
    return False


def sidecar_exits(replicas, attempt, job, restarted_during):
    """The indexes (as strings) whose sidecar exits 85 when the job's ConfigMap first names
    `attempt`: every pod but those that already restarted during attempt - 1 (their sidecar
    started after the failure, waits, and takes up the new attempt without a restart).
    restarted_during: (job, index) -> the attempt during which the pod last restarted."""
    return [str(i) for i in range(replicas) if restarted_during.get((job, str(i))) != attempt - 1]
