"""What a kubelet asks the API server for the ConfigMaps its pods read, as the scale bench plays it
for KWOK's nodes (KWOK reads none).

A v1.37 kubelet with its default `configMapAndSecretChangeDetectionStrategy: Watch`
(pkg/kubelet/apis/config/v1beta1/defaults.go) keeps, per node, one reflector for each ConfigMap
that a pod on the node refers to (pkg/kubelet/util/manager/watch_based_manager.go): the first pod
that refers to it (RegisterPod -> AddReference) starts a LIST and a WATCH with
`fieldSelector=metadata.name=<it>`; the last one to end (a pod is unregistered once it has
terminated, SyncTerminatedPod, or is removed) stops it, and a later pod starts a new one. An immutable ConfigMap's reflector is stopped once it has been read, a
mutable one's watch stays open. The references are every ConfigMap the pod names: env
`valueFrom.configMapKeyRef`, `envFrom.configMapRef`, and `configMap` volumes and projected
volumes' sources (the `kube-root-ca.crt` of every service account token volume among them)."""

import concurrent.futures
import threading


def configmaps_of(pod):
    """The names of the ConfigMaps `pod` refers to, in all of its containers and volumes."""
    spec = pod.get("spec") or {}
    names = set()
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(group) or []:
            for source in c.get("envFrom") or []:
                ref = source.get("configMapRef")
                if ref and ref.get("name"):
                    names.add(ref["name"])
            for var in c.get("env") or []:
                ref = (var.get("valueFrom") or {}).get("configMapKeyRef")
                if ref and ref.get("name"):
                    names.add(ref["name"])
    for volume in spec.get("volumes") or []:
        if (volume.get("configMap") or {}).get("name"):
            names.add(volume["configMap"]["name"])
        for source in (volume.get("projected") or {}).get("sources") or []:
            if (source.get("configMap") or {}).get("name"):
                names.add(source["configMap"]["name"])
    return names


class References:
    """Which pods on each node refer to each ConfigMap: the kubelet's reference counts. `seen`
    returns the ConfigMaps a pod's node must start reading (no other pod there refers to them),
    `gone` forgets a removed pod. Not thread-safe: the caller holds its lock."""

    def __init__(self):
        self.pods_of = {}    # (node, configmap) -> uids of the pods referring to it
        self.counted = {}    # uid -> (node, names) as first counted

    def seen(self, pod):
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        uid, node = meta.get("uid"), spec.get("nodeName")
        if not uid or not node or uid in self.counted:
            return []
        names = configmaps_of(pod)
        self.counted[uid] = (node, names)
        start = []
        for name in sorted(names):
            holders = self.pods_of.setdefault((node, name), set())
            if not holders:
                start.append(name)
            holders.add(uid)
        return start

    def gone(self, pod):
        """Forgets a pod that has ended or is removed (again: nothing)."""
        uid = (pod.get("metadata") or {}).get("uid")
        node, names = self.counted.pop(uid, (None, ()))
        for name in names:
            holders = self.pods_of.get((node, name), set())
            holders.discard(uid)
            if not holders:
                self.pods_of.pop((node, name), None)


class Kubelets:
    """Plays every node's kubelet reading its pods' ConfigMaps: call `on_pod` with each event of a
    watch of the namespace's pods; `workers` nodes read at once. `reads` counts the reads made."""

    def __init__(self, api, ns, workers, log):
        self.api, self.ns, self.log = api, ns, log
        self.lock = threading.Lock()
        self.refs = References()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        self.tasks = []
        self.reads = 0
        self.failed = 0  # reads the API server did not answer (logged)

    def on_pod(self, kind, pod):
        with self.lock:
            if kind == "DELETED" or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                self.refs.gone(pod)
                return
            node = (pod.get("spec") or {}).get("nodeName")
            for name in self.refs.seen(pod):
                self.tasks.append(self.pool.submit(self.read, node, name))

    def read(self, node, name):
        """What a kubelet's reflector for one ConfigMap asks: a LIST of it by name, then a WATCH
        from the list's resourceVersion; closed once open (an immutable ConfigMap's reflector
        stops after its first read; a mutable one's watch would stay open, which costs the API
        server a watcher, not CPU while nothing changes)."""
        path = f"/api/v1/namespaces/{self.ns}/configmaps?fieldSelector=metadata.name%3D{name}"
        try:
            code, listed = self.api.request("GET", path + "&limit=500&resourceVersion=0")
            watched = self.api.open_watch(path, listed["metadata"]["resourceVersion"]) if code == 200 else None
        except (OSError, RuntimeError, KeyError) as e:
            code, watched = str(e), None
        with self.lock:
            if code == 200 and watched == 200:
                self.reads += 1
                return
            self.failed += 1
        self.log(f"kubelet of {node}: ConfigMap {name}: LIST {code}, WATCH {watched}")

    def done(self):
        with self.lock:
            self.tasks = [t for t in self.tasks if not t.done()]
            return not self.tasks
