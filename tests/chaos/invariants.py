"""The invariants checked after every chaos run, from the API server's state, its audit log
and the trainers' own logs. Each check returns a list of violations (strings); empty = held."""
import json
import os
import re

from cluster import ATTEMPT_LABEL, JOB_LABEL, jobs_path

ID_LINE = re.compile(r"rank (\d+) of (\d+) pods, attempt (\d+), interface \S+, root ([0-9.]+):(\d+): id obtained")
POD_IP_LINE = re.compile(r"^pod-ip (\S*) attempt (\d+) index (\d+)$", re.M)
OWNED_KINDS = [("/api/v1", "pods"), ("/api/v1", "configmaps"), ("/api/v1", "services"),
               ("/api/v1", "serviceaccounts"), ("/apis/rbac.authorization.k8s.io/v1", "roles"),
               ("/apis/rbac.authorization.k8s.io/v1", "rolebindings")]


def pod_creates(audit_log, ns, offset=0):
    """(name, attempt, uid) of every pod the API server created in ns, from offset in the audit
    log; returns them and the offset to start from next time."""
    creates = []
    try:
        with open(audit_log, "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return creates, offset
    end = data.rfind(b"\n") + 1  # a line being written stays for the next call
    for line in data[:end].splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        ref = event.get("objectRef", {})
        if (event.get("stage") != "ResponseComplete" or ref.get("resource") != "pods" or ref.get("subresource")
                or ref.get("namespace") != ns or event.get("responseStatus", {}).get("code") != 201):
            continue
        meta = (event.get("responseObject") or {}).get("metadata", {})
        labels = meta.get("labels") or {}
        creates.append((meta.get("name"), labels.get(ATTEMPT_LABEL), meta.get("uid")))
    return creates, offset + end


def no_duplicate_pods(creates):
    """No two pods with the same name and attempt ever existed."""
    seen = {}
    for name, attempt, uid in creates:
        seen.setdefault((name, attempt), set()).add(uid)
    return [f"pod {name} of attempt {attempt} was created {len(uids)} times ({', '.join(sorted(uids))})"
            for (name, attempt), uids in sorted(seen.items()) if len(uids) > 1]


TRAINER_DONE = "trainer done"  # the chaos trainer's last line before it exits 0


def trainer_records(trainer_logs, job):
    """{attempt: {index: (pod_ip, id_line_or_None, joined)}} from the log files the trainers write
    (joined: the rank passed the barrier that stands in for communicator init)."""
    records = {}
    for name in os.listdir(trainer_logs):
        # <job>-<index>.<attempt>.<uid>.log
        m = re.match(rf"^{re.escape(job)}-(\d+)\.(\d+)\.[^.]+\.log$", name)
        if not m:
            continue
        with open(os.path.join(trainer_logs, name), errors="replace") as f:
            text = f.read()
        ip = POD_IP_LINE.search(text)
        line = ID_LINE.search(text)
        records.setdefault(int(m.group(2)), {})[int(m.group(1))] = (
            ip.group(1) if ip else None, line, "barrier: every rank joined" in text)
    return records


def ids_of_own_attempt(trainer_logs, job):
    """Every trainer that obtained an id got its own attempt's: the attempt it reports is the
    pod's, all ranks of an attempt name one root, that root is the address of this attempt's
    rank-0 pod, and no two attempts share a root address (the id carries it)."""
    bad = []
    roots = {}
    for attempt, ranks in sorted(trainer_records(trainer_logs, job).items()):
        root0_ip = ranks.get(0, (None, None, False))[0]
        seen = set()
        for index, (ip, line, _) in sorted(ranks.items()):
            if line is None:
                continue
            if int(line.group(3)) != attempt:
                bad.append(f"{job}-{index} of attempt {attempt} got the id of attempt {line.group(3)}")
            root = f"{line.group(4)}:{line.group(5)}"
            seen.add(root)
            if root0_ip and line.group(4) != root0_ip:
                bad.append(f"{job}-{index} of attempt {attempt}: root {root} is not rank 0's pod {root0_ip}")
        if len(seen) > 1:
            bad.append(f"{job} attempt {attempt}: ranks name {len(seen)} roots: {sorted(seen)}")
        for root in seen:
            if root in roots:
                bad.append(f"{job}: attempts {roots[root]} and {attempt} share the root {root}")
            roots[root] = attempt
    return bad


def trainer_exited_zero(pod):
    """What the operator's Succeeded rests on: the trainer container ended with exit code 0 (the
    pod's phase follows a moment later, once the kubelet has stopped its sidecar)."""
    if pod.get("status", {}).get("phase") == "Succeeded":
        return True
    for c in pod.get("status", {}).get("containerStatuses") or []:
        if c.get("name") == "trainer":
            return (c.get("state", {}).get("terminated") or {}).get("exitCode") == 0
    return False


def status_matches_pods(api, ns, job, creates):
    """The job's status agrees with its pods: its attempt is the newest one pods were made for,
    and a Succeeded job has all replicas of that attempt with their trainer exited 0."""
    obj = api.get(jobs_path(ns, job))
    if obj is None:
        return [f"{job}: cannot read the NcclJob"]
    status = obj.get("status", {})
    bad = []
    made_for = [int(a) for (name, a, _) in creates if a and re.fullmatch(rf"{re.escape(job)}-\d+", name or "")]
    # In place, pods move to a later attempt without being made again: their label says which. A
    # failed job's in-place pods are deleted, so only its creates are left to compare with.
    pods = api.items(f"/api/v1/namespaces/{ns}/pods?labelSelector={JOB_LABEL}={job}") or []
    moved_to = [int(p["metadata"]["labels"][ATTEMPT_LABEL]) for p in pods
                if p["metadata"].get("labels", {}).get(ATTEMPT_LABEL, "").isdigit()]
    newest = max(made_for + moved_to, default=None)
    if not moved_to and status.get("state") == "Failed" and obj["spec"].get("failurePolicy", {}).get("restartStrategy") == "InPlace":
        if made_for and (status.get("attempt") or 0) < max(made_for):
            bad.append(f"{job}: status.attempt {status.get('attempt')} but pods were made for attempt {max(made_for)}")
    elif newest is not None and status.get("attempt") != newest:
        bad.append(f"{job}: status.attempt {status.get('attempt')} but its pods were made for or moved to "
                   f"attempt {newest}")
    if status.get("state") == "Succeeded":
        current = [p for p in pods if p["metadata"].get("labels", {}).get(ATTEMPT_LABEL) == str(status.get("attempt"))]
        not_done = [p["metadata"]["name"] for p in current if not trainer_exited_zero(p)]
        if not_done:
            bad.append(f"{job}: Succeeded but the trainers of attempt {status.get('attempt')} in {not_done} "
                       "did not exit 0")
        if len(current) != obj["spec"]["replicas"]:
            bad.append(f"{job}: Succeeded with {len(current)} pods of attempt {status.get('attempt')}, "
                       f"want {obj['spec']['replicas']}")
    return bad


def ranks_whose_log_says(trainer_logs, job, text):
    """{attempt: indexes whose trainer log of that attempt holds `text`}."""
    found = {}
    for name in os.listdir(trainer_logs):
        m = re.match(rf"^{re.escape(job)}-(\d+)\.(\d+)\.[^.]+\.log$", name)
        if m:
            with open(os.path.join(trainer_logs, name), errors="replace") as f:
                if text in f.read():
                    found.setdefault(int(m.group(2)), set()).add(int(m.group(1)))
    return found


def finished_ranks(trainer_logs, job):
    """{attempt: indexes whose trainer ran to its end (exit 0)}."""
    return ranks_whose_log_says(trainer_logs, job, TRAINER_DONE)


def ids_obtained(trainer_logs, job):
    """The attempts in which a trainer other than the root's obtained the id (the root's makes it
    before it is published): those whose id was out."""
    return {a for a, ranks in ranks_whose_log_says(trainer_logs, job, "id obtained").items() if ranks - {0}}


def restarted_in_place(api, ns, job, creates, trainer_logs):
    """Under restartStrategy InPlace every restart kept the pods: each pod of the job was created
    once, and the job says its attempts ran in place. The documented exceptions: a pod whose
    trainer had already exited 0 when another rank failed has ended (phase Succeeded) and is made
    again, with every other pod of a gang (then a trainer of an earlier attempt says so); and a pod
    that failed before its attempt's id was out is made again for the next attempt (then no
    trainer of the attempt before obtained an id)."""
    bad = []
    made = {}
    with_id = ids_obtained(trainer_logs, job)
    for name, attempt, uid in creates:
        if name and re.fullmatch(rf"{re.escape(job)}-\d+", name):
            if name in made and attempt and int(attempt) - 1 not in with_id:
                continue  # made again after a failure before the id of the attempt before
            made.setdefault(name, set()).add(uid)
    again = {name: len(uids) for name, uids in made.items() if len(uids) > 1}
    last = max([int(a) for (n, a, _) in creates if a and n in made] or [1])
    ended_early = any(a < last for a in finished_ranks(trainer_logs, job))
    if again and not ended_early:
        bad.append(f"{job}: pods made again under restartStrategy InPlace: {again}")
    obj = api.get(jobs_path(ns, job)) or {}
    status = obj.get("status", {})
    if (status.get("attempt") or 1) > 1 and status.get("restartStrategy") != "InPlace":
        bad.append(f"{job}: attempt {status.get('attempt')} ran with restartStrategy {status.get('restartStrategy')!r}")
    return bad


def leftovers(api, ns, uids):
    """Objects still owned by deleted jobs (the operator's pods, ConfigMap, Service, RBAC)."""
    left = []
    for prefix, kind in OWNED_KINDS:
        for item in api.items(f"{prefix}/namespaces/{ns}/{kind}") or []:
            for ref in item["metadata"].get("ownerReferences") or []:
                if ref.get("uid") in uids:
                    left.append(f"{kind}/{item['metadata']['name']}")
    return left


def eviction_is_a_disruption(status, job):
    """A job one of whose pods was evicted (and nothing else): it succeeded, no restart was
    counted, and at most the one disruption (none when the attempt had ended before the pod went)."""
    out = []
    if status.get("state") != "Succeeded":
        out.append(f"{job}: {status.get('state')} after an eviction")
    if status.get("restarts", 0) != 0:
        out.append(f"{job}: an eviction counted as a restart (restarts {status.get('restarts')})")
    if status.get("disruptions", 0) > 1:
        out.append(f"{job}: one eviction counted as {status.get('disruptions')} disruptions")
    return out
