#!/usr/bin/env python3
"""Where one restart's time went, from the logs on the real node.

  timeline.py --t0 EPOCH --pods PREFIX --ns NS --kubelet-log FILE [--jobset-log FILE] [--window S]

Prints, in time order and in seconds after --t0 (the kill), what the kubelet (-v 2: PLEG events,
pod updates from the API server, probe results), the containers of the pods whose names start
with PREFIX (their CRI log files under /var/log/pods: the sidecar's, agent's and trainer's
lines that mark an attempt) and JobSet's controller said in the --window seconds after it.
"""
import argparse
import datetime
import glob
import json
import os
import re
import sys

# Container log lines worth a row: the sidecar's, JobSet's agent's and the trainers'.
MARKS = [
    "attempt over", "restarting the pod", "waiting for the ConfigMap", "serving attempt", "\"started\"",
    "obtained", "stopping", "exiting agent", "successfully updated Pod", "starting startup probe server",
    "starting manager", "trainer started",
]
KUBELET = re.compile(r'^[IWE](\d{4}) (\d\d:\d\d:\d\d\.\d+)\s+\d+ \S+\] "([^"]+)"(.*)$')
KUBELET_KEEP = ["SyncLoop (PLEG): event for pod", "SyncLoop UPDATE", "SyncLoop (probe)",
                "Generic (PLEG): container finished", "Pod marked for RestartAllContainers"]
JOBSET_KEEP = ["in-place restart attempt"]


def cri_time(text):
    # RFC 3339 with up to 9 fractional digits, UTC ("2026-12-04T23:35:00.123456789Z").
    date, _, frac = text.rstrip("Z").partition(".")
    base = datetime.datetime.strptime(date, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return base.timestamp() + (float("0." + frac) if frac else 0.0)


def kubelet_time(mmdd, hms, year):
    base = datetime.datetime.strptime(f"{year}{mmdd} {hms.split('.')[0]}", "%Y%m%d %H:%M:%S")
    frac = float("0." + hms.split(".")[1]) if "." in hms else 0.0
    return base.replace(tzinfo=datetime.timezone.utc).timestamp() + frac


def container_rows(ns, prefix, t0, t1):
    for path in glob.glob(f"/var/log/pods/{ns}_{prefix}*/*/*.log"):
        pod = os.path.basename(os.path.dirname(os.path.dirname(path))).split("_")[1]
        container = os.path.basename(os.path.dirname(path))
        with open(path, errors="replace") as f:
            for line in f:
                stamp, _, rest = line.partition(" ")
                msg = rest.split(" ", 2)[-1].strip()
                if not any(m in msg for m in MARKS):
                    continue
                t = cri_time(stamp)
                if t0 <= t <= t1:
                    yield t, pod, container, short(msg)


def short(msg):
    try:
        j = json.loads(msg)
        keep = {k: v for k, v in j.items() if k in ("attempt", "configmap_attempt", "exit_code", "newPodInPlaceRestartAttempt", "exitCode")}
        return (j.get("msg") or j.get("message") or "") + (" " + json.dumps(keep) if keep else "")
    except ValueError:
        return msg[:140]


def pod_uids(ns, prefix):
    """The UIDs of the pods whose logs are on the node: /var/log/pods/<ns>_<name>_<uid>."""
    return {os.path.basename(d).split("_")[2]: os.path.basename(d).split("_")[1]
            for d in glob.glob(f"/var/log/pods/{ns}_{prefix}*")}


def kubelet_rows(path, ns, prefix, t0, t1, year):
    uids = pod_uids(ns, prefix)
    with open(path, errors="replace") as f:
        for line in f:
            m = KUBELET.match(line)
            if not m or m.group(3) not in KUBELET_KEEP:
                continue
            uid = re.search(r'podID="([^"]+)"', m.group(4))
            if f"{ns}/{prefix}" not in m.group(4) and not (uid and uid.group(1) in uids):
                continue
            t = kubelet_time(m.group(1), m.group(2), year)
            if t0 <= t <= t1:
                pod = re.search(rf'{re.escape(ns)}/({re.escape(prefix)}[^"\] ]*)', m.group(4))
                name = pod.group(1) if pod else uids.get(uid.group(1), "-") if uid else "-"
                detail = re.sub(r'\s+', ' ', m.group(4)).strip()
                typ = re.search(r'"?Type"?:"?(\w+)', detail)
                probe = re.search(r'probe="(\w+)" status="(\w+)"', detail)
                code = re.search(r'exitCode=(\d+)', detail)
                what = m.group(3) + (" " + typ.group(1) if typ else "") + \
                    (f" {probe.group(1)} {probe.group(2)}" if probe else "") + (f" exit {code.group(1)}" if code else "")
                yield t, name, "kubelet", what


def jobset_rows(path, t0, t1):
    # zap's development console lines: time, level, [logger,] message, JSON fields, tab-separated.
    for line in open(path, errors="replace"):
        fields = line.rstrip("\n").split("\t")
        msg = next((f for f in fields[1:] if any(k in f for k in JOBSET_KEEP) and not f.startswith("{")), None)
        if msg is None:
            continue
        try:
            t = cri_time(fields[0])
        except ValueError:
            continue
        value = re.search(r'"(?:previous|current)InPlaceRestartAttempt": ?(\d+)', line)
        if t0 <= t <= t1:
            yield t, "-", "jobset-manager", msg + (" " + value.group(1) if value else "")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--t0", type=float, required=True)
    p.add_argument("--pods", required=True)
    p.add_argument("--ns", required=True)
    p.add_argument("--kubelet-log", required=True)
    p.add_argument("--jobset-log")
    p.add_argument("--window", type=float, default=15)
    a = p.parse_args()
    t1 = a.t0 + a.window
    year = datetime.datetime.fromtimestamp(a.t0, datetime.timezone.utc).year
    rows = list(container_rows(a.ns, a.pods, a.t0, t1)) + list(kubelet_rows(a.kubelet_log, a.ns, a.pods, a.t0, t1, year))
    if a.jobset_log:
        rows += list(jobset_rows(a.jobset_log, a.t0, t1))
    for t, pod, who, what in sorted(rows):
        print(f"+{t - a.t0:6.3f} s  {pod:<28} {who:<24} {what}")
    if not rows:
        sys.exit("timeline.py: nothing logged in the window")


if __name__ == "__main__":
    main()
