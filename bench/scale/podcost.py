#!/usr/bin/env python3
"""What one pod of a given shape costs the simulated cluster (bench/scale/run.sh --podcost starts
the cluster and calls this): --pods pods of each shape are created straight through the API
(--in-flight at a time), bound by kube-scheduler and started by KWOK; per pod, the CPU ms of each
part of the cluster from creation until all are Running, the pod's bytes as served (JSON,
managedFields and status included) and the time until all are Running. Between shapes every pod
is deleted and gone.

The shapes are taken from the controllers themselves, not written by hand: the operator (and
JobSet with kube-controller-manager's Job controller) run once, make a pod, and the bench keeps
exactly the fields its creator sent (the creator's managedFields entry says which):
  ours        the operator's pod as it makes it
  before      the pod of --operator-before (another build) as it makes it; no-defaults and
              no-copies are then made from this one, so each change is measured alone
  lean-env    ours with the sidecar's env cut to the variables it reads and cannot learn
              otherwise (LEAN_SIDECAR_ENV)
  no-mf       ours, then at once a merge patch of metadata.managedFields [{}] (one more write a
              pod): the API server then keeps no managedFields on the pod, nor for later
              writers that do not apply (KWOK's status, a kubelet's). [{}] in the create itself
              keeps all of them: it only drops the entries the object had before the write
              (apimachinery managedfields/internal/fieldmanager.go, decodeLiveOrNew), and
              skipnonapplied.go tracks every create (DefaultTrackOnCreateProbability 1) but no
              update of an object whose managedFields are empty
  jobset      the Job controller's pod of a JobSet of the same trainer (no sidecar); its owner
              becomes the NcclJob and its tracking finalizer is left off, so that nothing
              deletes or patches the copies
  no-sidecar  ours without the sidecar container (a lower bound)
  no-defaults ours without the fields of its creator's managedFields entry that the API server
              fills in with the same value (server-side dry-run creates, one field left out at a
              time): what sending fewer fields saves (the request's bytes; the creator owns the
              defaulted fields either way)
  no-copies   ours without the annotations that repeat a label (same key, same value)
  no-ports    ours without the sidecar's declared ports (the pod is not on the host's network, so
              they reserve nothing)
  env-once    ours with every variable whose value is the same in every pod of the job (pods 0 and
              1 compared) moved into a per-job immutable ConfigMap the containers read by envFrom
              (ours already carries the job's values so, J in RESULTS.md: this moves the rest)
The kubelets' reads of the ConfigMaps the pods refer to are played (kubelet_configmaps.py) and
counted per shape.
One JSON line per shape on stdout (and appended to --out); --breakdown writes each shape's first
pod as served and the defaults found, for podbytes.py."""

import argparse
import concurrent.futures
import copy
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubelet_configmaps  # noqa: E402
from kubeapi import Api  # noqa: E402
from scale import (cluster_parts, cpu_of_parts, jobset_job, operator_job, start_jobset,  # noqa: E402
                   start_operator, wait_for)

SHAPES = ["ours", "before", "lean-env", "no-mf", "jobset", "no-sidecar", "no-defaults", "no-copies", "no-ports", "env-once"]
# What the sidecar reads from its env and cannot learn otherwise (sidecar/src/config.cc).
LEAN_SIDECAR_ENV = {"NCCLJOB_NAME", "NCCLJOB_UID", "NCCLJOB_INDEX", "NCCLJOB_REPLICAS", "NCCLJOB_GPUS_PER_POD",
                    "NCCLJOB_ATTEMPT", "NCCLJOB_BOOTSTRAP_ROOTS"}


def sent_fields(value, fields):
    """The part of `value` (a served object) that fieldsV1 `fields` names: what its writer sent.
    An empty set (a leaf, or an atomic list or map) keeps the whole value."""
    subs = {k: v for k, v in fields.items() if k != "."}
    if not subs:
        return value
    if isinstance(value, dict):
        return {k[2:]: sent_fields(value[k[2:]], sub) for k, sub in subs.items()
                if k.startswith("f:") and k[2:] in value}
    if isinstance(value, list):
        keyed = [(json.loads(k[2:]), sub) for k, sub in subs.items() if k.startswith("k:")]
        values = [json.loads(k[2:]) for k in subs if k.startswith("v:")]
        out = []
        for item in value:
            for key, sub in keyed:
                if isinstance(item, dict) and all(item.get(kk) == vv for kk, vv in key.items()):
                    out.append(sent_fields(item, sub))
                    break
            else:
                if item in values:
                    out.append(item)
        return out
    return value


def as_sent(pod, manager):
    """The pod as `manager` created it (its Update entry of managedFields), named and typed."""
    entries = [e for e in pod["metadata"].get("managedFields", [])
               if e.get("manager") == manager and e.get("operation") == "Update" and not e.get("subresource")]
    if not entries:
        raise RuntimeError(f"pod {pod['metadata']['name']}: no managedFields entry of {manager}")
    sent = sent_fields(pod, entries[0]["fieldsV1"])
    sent.pop("status", None)
    sent["apiVersion"], sent["kind"] = "v1", "Pod"
    sent["metadata"]["name"] = pod["metadata"]["name"]
    return sent


def leaves(value, path=()):
    """Every leaf of `value` as (path, value); list items by index."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from leaves(v, path + (k,))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            yield from leaves(v, path + (i,))
    else:
        yield path, value


def at(value, path):
    for p in path:
        if isinstance(value, dict) and p in value or isinstance(value, list) and isinstance(p, int) and p < len(value):
            value = value[p]
        else:
            return None
    return value


def without(value, path):
    """A copy of `value` with the leaf at `path` left out."""
    out = copy.deepcopy(value)
    parent = at(out, path[:-1])
    del parent[path[-1]]
    return out


def without_label_copies(pod):
    out = copy.deepcopy(pod)
    md = out["metadata"]
    labels = md.get("labels", {})
    md["annotations"] = {k: v for k, v in md.get("annotations", {}).items() if labels.get(k) != v}
    if not md["annotations"]:
        del md["annotations"]
    return out


def env_once(pod, other, configmap):
    """`pod` with the variables that `other` (another pod of the job) carries with the same value
    moved into `configmap`, read by envFrom; returns (pod, the ConfigMap's data)."""
    out, data = copy.deepcopy(pod), {}
    others = {c["name"]: c for c in other["spec"].get("containers", []) + other["spec"].get("initContainers", [])}
    for c in out["spec"].get("containers", []) + out["spec"].get("initContainers", []):
        theirs = {v["name"]: v for v in others.get(c["name"], {}).get("env", [])}
        keep = []
        for v in c.get("env", []):
            if "value" in v and theirs.get(v["name"]) == v and data.get(v["name"], v["value"]) == v["value"]:
                data[v["name"]] = v["value"]
            else:
                keep.append(v)
        c["env"] = keep
        c["envFrom"] = c.get("envFrom", []) + [{"configMapRef": {"name": configmap}}]
    return out, data


class PodCost:
    def __init__(self, args):
        self.args = args
        env = dict(line.replace("export ", "", 1).strip().split("=", 1)
                   for line in open(f"{args.controlplane}/env") if "=" in line)
        self.api = Api(env["APISERVER_URL"], f"{args.controlplane}/pki", user_agent="podcost-bench/1")
        self.ns = f"podcost-{os.getpid()}"
        self.pods_path = f"/api/v1/namespaces/{self.ns}/pods"
        self.work = tempfile.mkdtemp(prefix="podcost-")
        self.lock = threading.Lock()
        self.running = set()
        self.stop = threading.Event()
        self.served = {}
        self.defaults = {}
        # The kubelets' reads of the ConfigMaps the pods refer to (kubelet_configmaps.py).
        self.kubelets = kubelet_configmaps.Kubelets(self.api, self.ns, 32, self.log)

    def log(self, msg):
        print(f"[podcost {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    def pods_of(self, label, value):
        code, listed = self.api.request("GET", f"{self.pods_path}?labelSelector={label}%3D{value}")
        return listed.get("items", []) if code == 200 else []

    def defaults_sent(self, pod):
        """The spec's fields in `pod` that the API server fills in with the same value: each
        left out in turn from a server-side dry-run create, then read back."""
        code, full = self.api.request("POST", f"{self.pods_path}?dryRun=All", pod)
        if code not in (200, 201):
            raise RuntimeError(f"dry-run create: {code} {full}")
        found = []
        for path, value in leaves(pod["spec"], ("spec",)):
            code, served = self.api.request("POST", f"{self.pods_path}?dryRun=All", without(pod, path))
            if code in (200, 201) and at(served, path) == value and at(full, path) == value:
                name = ".".join(str(p) for p in path)
                found.append({"path": name, "value": value, "path_keys": list(path),
                              "bytes": len(json.dumps({path[-1]: value}, separators=(",", ":"))) - 1})
        return found

    def capture(self, start, path, manifest, label, manager):
        """Runs the controller until it made a pod of `manifest`; returns that pod as sent."""
        proc, _ = start(self.args, self.ns, self.work)
        try:
            self.api.create(path, manifest)
            name = manifest["metadata"]["name"]
            wait_for(f"the pods of {name}", lambda: len(self.pods_of(label, name)) == 2, 120)
            pods = sorted(self.pods_of(label, name), key=lambda p: p["metadata"]["name"])
            return [as_sent(p, manager) for p in pods], self.api.request("GET", f"{path}/{name}")[1]
        finally:
            proc.stop()

    def shapes(self):
        a = self.args
        self.api.create("/api/v1/namespaces", {"metadata": {"name": self.ns}})
        (ours, ours1), job = self.capture(start_operator, f"/apis/nccl.dev/v1alpha1/namespaces/{self.ns}/nccljobs",
                                 operator_job("cost", 2, 1, {}), "nccl.dev/job-name", "nccl-operator")
        owner = {"apiVersion": job["apiVersion"], "kind": job["kind"], "name": job["metadata"]["name"],
                 "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
        out = {"ours": ours}
        if a.operator_before:
            def start_before(args, ns, work):
                return start_operator(argparse.Namespace(**{**vars(args), "operator": a.operator_before}), ns, work)
            (out["before"], _), _ = self.capture(start_before, f"/apis/nccl.dev/v1alpha1/namespaces/{self.ns}/nccljobs",
                                                 operator_job("costb", 2, 1, {}), "nccl.dev/job-name", "nccl-operator")
        if "jobset" in a.shapes:
            (js, _), _ = self.capture(start_jobset, f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{self.ns}/jobsets",
                                 jobset_job("costjs", 2, 1, {}), "jobset.sigs.k8s.io/jobset-name",
                                 "kube-controller-manager")
            js["metadata"]["ownerReferences"] = [owner]
            js["metadata"].pop("finalizers", None)
            self.api.delete(f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{self.ns}/jobsets/costjs")
            out["jobset"] = js
        # The controllers' own pods go; the NcclJob stays as the copies' owner (no operator runs).
        self.remove_all()
        lean = copy.deepcopy(ours)
        sidecar = lean["spec"]["initContainers"][0]
        sidecar["env"] = [v for v in sidecar.get("env", []) if v["name"] in LEAN_SIDECAR_ENV]
        out["lean-env"] = lean
        out["no-mf"] = ours
        bare = copy.deepcopy(ours)
        bare["spec"]["initContainers"] = bare["spec"]["initContainers"][1:]
        if not bare["spec"]["initContainers"]:
            del bare["spec"]["initContainers"]
        out["no-sidecar"] = bare
        self.defaults = {s: self.defaults_sent(out[s]) for s in ("ours", "before", "jobset") if s in out}
        base = "before" if "before" in out else "ours"
        lean = out[base]
        for f in reversed(self.defaults[base]):  # the later leaves first: list indexes stay true
            lean = without(lean, f["path_keys"])
        out["no-defaults"] = lean
        out["no-copies"] = without_label_copies(out[base])
        out["no-ports"] = copy.deepcopy(ours)
        out["no-ports"]["spec"]["initContainers"][0].pop("ports", None)
        configmap = "cost-env"
        out["env-once"], data = env_once(ours, ours1, configmap)
        self.api.create(f"/api/v1/namespaces/{self.ns}/configmaps",
                        {"metadata": {"name": configmap}, "immutable": True, "data": data})
        return out

    def watch(self):
        def on_pod(kind, pod):
            self.kubelets.on_pod(kind, pod)
            name = pod["metadata"]["name"]
            if kind != "DELETED" and pod.get("status", {}).get("phase") == "Running":
                with self.lock:
                    self.running.add(name)
        threading.Thread(target=self.api.watch, args=(self.pods_path, on_pod, self.stop), daemon=True).start()

    def remove_all(self):
        code, listed = self.api.request("GET", self.pods_path)
        names = [p["metadata"]["name"] for p in listed.get("items", [])]
        body = {"gracePeriodSeconds": 0}
        with concurrent.futures.ThreadPoolExecutor(self.args.in_flight) as pool:
            list(pool.map(lambda n: self.api.request("DELETE", f"{self.pods_path}/{n}", body), names))
        wait_for("every pod gone", lambda: not self.api.request("GET", f"{self.pods_path}?limit=1")[1]["items"], 300)

    def measure(self, shape, pod, rnd):
        a = self.args
        names = [f"{shape}-r{rnd}-{i}" for i in range(a.pods)]  # never a name of an earlier round

        def create(name):
            body = copy.deepcopy(pod)
            body["metadata"]["name"] = name
            body["spec"]["hostname"] = name
            self.api.create(self.pods_path, body)
            if shape == "no-mf":
                self.api.merge_patch(f"{self.pods_path}/{name}", {"metadata": {"managedFields": [{}]}})
        parts = cluster_parts()
        cpu0, t0, reads0 = cpu_of_parts(parts), time.monotonic(), self.kubelets.reads
        with concurrent.futures.ThreadPoolExecutor(a.in_flight) as pool:
            list(pool.map(create, names))
        created = time.monotonic() - t0
        wait_for(f"{shape}: {a.pods} pods Running",
                 lambda: sum(1 for n in names if n in self.running) == a.pods, a.timeout)
        seconds = time.monotonic() - t0
        wait_for(f"{shape}: the played kubelets' ConfigMap reads", self.kubelets.done, a.timeout)
        cpu1 = cpu_of_parts(parts)
        code, served = self.api.request("GET", f"{self.pods_path}/{names[0]}")
        self.served.setdefault(shape, served)
        mf = served["metadata"].get("managedFields", [])
        result = {"shape": shape, "pods": a.pods, "in_flight": a.in_flight,
                  "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "bytes_sent": len(json.dumps(pod, separators=(",", ":"))),
                  "bytes_served": len(json.dumps(served, separators=(",", ":"))),
                  "managed_fields_bytes": len(json.dumps(mf, separators=(",", ":"))),
                  "managers": sorted(f"{e.get('manager')}/{e.get('operation')}/{e.get('subresource', '')}" for e in mf),
                  "created_s": round(created, 2), "running_s": round(seconds, 2),
                  "kubelet_configmap_reads": self.kubelets.reads - reads0,
                  "cpu_ms_per_pod": {k: round(1000 * (cpu1[k] - cpu0[k]) / a.pods, 2) for k in cpu1}}
        result["cpu_ms_per_pod"]["cluster"] = round(sum(v for k, v in result["cpu_ms_per_pod"].items()
                                                        if k != "bench"), 2)
        self.remove_all()
        with self.lock:
            self.running.clear()
        return result

    def bytes_only(self):
        """One pod of each shape created and read back, never run (no status): the spec's side of
        --breakdown, on any control plane with the CRDs, without KWOK or load."""
        shapes = self.shapes()
        for shape in self.args.shapes:
            body = copy.deepcopy(shapes[shape])
            body["metadata"]["name"] = body["spec"]["hostname"] = f"{shape}-0"
            self.served[shape] = self.api.create(self.pods_path, body)
        with open(self.args.breakdown, "w") as f:
            json.dump({"served": self.served, "sent": shapes, "defaults_sent": self.defaults}, f, indent=1)
        self.api.delete(f"/api/v1/namespaces/{self.ns}")

    def run(self):
        shapes = self.shapes()
        self.watch()
        if self.args.warmup:
            # The first pods after the nodes came up cost KWOK about twice as much (its first
            # stage runs): without this, whichever shape came first looked dearer.
            pods, self.args.pods = self.args.pods, self.args.warmup
            self.log(f"warm-up: {self.args.warmup} pods, not recorded")
            self.measure(self.args.shapes[0], shapes[self.args.shapes[0]], 0)
            self.args.pods = pods
        results = []
        for rnd in range(self.args.rounds):
            for shape in self.args.shapes:
                self.log(f"round {rnd + 1}: {shape}: {self.args.pods} pods")
                r = self.measure(shape, shapes[shape], rnd + 1)
                r["round"] = rnd + 1
                r["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
                self.log(json.dumps(r))
                results.append(r)
                if self.args.out:
                    with open(self.args.out, "a") as f:
                        f.write(json.dumps(r) + "\n")
        if self.args.dump:
            with open(self.args.dump, "w") as f:
                json.dump(shapes, f, indent=1)
        if self.args.breakdown:
            with open(self.args.breakdown, "w") as f:
                json.dump({"served": self.served, "sent": shapes, "defaults_sent": self.defaults}, f, indent=1)
        self.stop.set()
        self.api.delete(f"/api/v1/namespaces/{self.ns}")
        return results


def table(results):
    parts = ["apiserver", "etcd", "scheduler", "kwok", "controller-manager"]
    lines = ["| shape | round | bytes sent | bytes served | of which managedFields | "
             + " | ".join(f"{p} ms" for p in parts) + " | cluster ms | created s | all Running s | ConfigMap reads |",
             "| --- " * (9 + len(parts)) + "|"]
    for r in results:
        c = r["cpu_ms_per_pod"]
        lines.append(f"| {r['shape']} | {r['round']} | {r['bytes_sent']} | {r['bytes_served']} | "
                     f"{r['managed_fields_bytes']} | " + " | ".join(f"{c.get(p, 0):.2f}" for p in parts)
                     + f" | {c['cluster']:.2f} | {r['created_s']} | {r['running_s']} | {r.get('kubelet_configmap_reads', '—')} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--controlplane", required=True, help="the control plane's dir (tests/harness/controlplane)")
    p.add_argument("--operator", required=True, help="the nccl-operator binary")
    p.add_argument("--operator-before", help="another nccl-operator binary, for the before shape")
    p.add_argument("--jobset-dir", help="bench/jobset/build.sh's output dir (for the jobset shape)")
    p.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, of {','.join(SHAPES)}")
    p.add_argument("--pods", type=int, default=2000, help="pods of each shape")
    p.add_argument("--in-flight", type=int, default=16, help="creates in flight")
    p.add_argument("--rounds", type=int, default=1, help="every shape this many times, in turn")
    p.add_argument("--warmup", type=int, default=500, help="pods made and removed first, not recorded")
    p.add_argument("--timeout", type=float, default=600, help="deadline of each wait, seconds")
    p.add_argument("--out", help="append one JSON line per shape and round here")
    p.add_argument("--dump", help="write the shapes (the pods as sent) here")
    p.add_argument("--breakdown", help="write each shape's first pod as served, and the defaults its creator "
                   "sent, here (bench/scale/podbytes.py prints it)")
    p.add_argument("--bytes-only", action="store_true", help="with --breakdown: one pod of each shape created, "
                   "never run, nothing timed (any control plane with the CRDs; no KWOK)")
    a = p.parse_args()
    a.shapes = a.shapes.split(",")
    for s in a.shapes:
        if s not in SHAPES:
            p.error(f"unknown shape {s}")
    if ("before" in a.shapes) != bool(a.operator_before):
        p.error("the before shape and --operator-before go together")
    if a.bytes_only:
        if not a.breakdown:
            p.error("--bytes-only needs --breakdown")
        PodCost(a).bytes_only()
        return
    print(table(PodCost(a).run()))


if __name__ == "__main__":
    main()
