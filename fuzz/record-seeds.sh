#!/usr/bin/env bash
# Records the seed corpora's real objects from a local control plane (tests/harness/controlplane):
# a pod watch stream and list (informer), an NcclJob with a status, the job's ConfigMap, a pod with
# the id annotations, the control plane's kubeconfig (its key material cut to a few bytes). Writes
# fuzz/corpus/<target>/recorded-*; run it again when the objects' shapes change.
#
#   fuzz/record-seeds.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,7p' "$0"; exit 0 ;; esac
dir=$(mktemp -d)
trap '"$root/tests/harness/controlplane/controlplane.sh" down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$root/tests/harness/controlplane/controlplane.sh" up --dir "$dir" >/dev/null
# shellcheck disable=SC1091
source "$dir/env"
k() { "$CONTROLPLANE_BIN/kubectl" "$@"; }
k apply --server-side --force-conflicts -f "$root/deploy/crd/nccl.dev_nccljobs.yaml" >/dev/null
k wait --for condition=established crd/nccljobs.nccl.dev --timeout=60s >/dev/null
k apply -f "$root/deploy/examples/ncclJob.yaml" >/dev/null
uid=$(k get nccljob demo -o jsonpath='{.metadata.uid}')
id=$(head -c 128 /dev/urandom | base64 -w0)

out="$dir/out"; mkdir -p "$out"
# Watch pods from the start while pods are created, annotated, failed (status) and deleted.
k get --raw "/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=8" >"$out/watch" &
watcher=$!
for i in 0 1; do
  k create -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata:
  name: demo-$i
  labels: {nccl.dev/job: demo, nccl.dev/index: "$i", nccl.dev/attempt: "1"}
  ownerReferences: [{apiVersion: nccl.dev/v1alpha1, kind: NcclJob, name: demo, uid: $uid, controller: true}]
spec:
  containers:
  - {name: trainer, image: nccl-trainer:0.1.0, env: [{name: NCCLJOB_INDEX, value: "$i"}]}
  - {name: nccl-sidecar, image: nccl-sidecar:0.1.0}
POD
done
k annotate pod demo-0 nccl.dev/unique-id="$id" nccl.dev/unique-id-attempt=1 >/dev/null
k patch pod demo-1 --subresource=status --type=merge -p '{"status":{"phase":"Failed","containerStatuses":[
  {"name":"trainer","ready":false,"restartCount":0,"image":"nccl-trainer:0.1.0","imageID":"",
   "state":{"terminated":{"exitCode":3,"reason":"Error","message":"boom","startedAt":null,"finishedAt":null}},"lastState":{}}]}}' >/dev/null
k create configmap demo-nccl --from-literal=attempt=1 --from-literal=uniqueId="$id" --from-literal=jobUID="$uid" >/dev/null
k patch nccljob demo --subresource=status --type=merge -p '{"status":{"phase":"Running","attempt":1,"restarts":0,
  "conditions":[{"type":"Running","status":"True","reason":"AllPodsRunning","message":"4 pods","lastTransitionTime":"2026-12-01T00:00:00Z"}]}}' >/dev/null
k get --raw /api/v1/namespaces/default/pods >"$out/list"
k get pod demo-0 -o json >"$out/pod0"
k get pod demo-1 -o json >"$out/pod1"
k get configmap demo-nccl -o json >"$out/configmap"
k get nccljob demo -o json >"$out/nccljob"
k delete pod demo-1 --wait=false >/dev/null
wait "$watcher" || true

python3 - "$root/fuzz/corpus" "$out" "$KUBECONFIG" "$uid" <<'PY'
import json, os, re, sys
corpus, out, kubeconfig, uid = sys.argv[1:]
def put(target, name, data):
    os.makedirs(os.path.join(corpus, target), exist_ok=True)
    with open(os.path.join(corpus, target, "recorded-" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
def read(name):
    return open(os.path.join(out, name), "rb").read()
def compact(name):
    return json.dumps(json.loads(read(name)), separators=(",", ":"))
def fdp_string(s):  # FuzzedDataProvider::ConsumeRandomLengthString's encoding, ended
    return s.replace("\\", "\\\\") + "\\x"
watch = read("watch")
# FuzzedDataProvider takes integers from the end: cut sizes, their count, then the line limit.
put("watch_stream", "pods", watch + b"\x07\x05\x03\x02\x10\x00")
put("informer_cache", "pods", compact("list").encode() + b"\n" + watch)
put("nccl_job", "demo", compact("nccljob"))
put("observe_pod", "root", "trainer\n" + compact("pod0"))
put("observe_pod", "failed", "trainer\n" + compact("pod1"))
put("sidecar_inputs", "configmap", fdp_string(uid) + compact("configmap") + "\x02")
put("sidecar_inputs", "pod", "x" * 128 + compact("pod0") + "\x01" + "\x00" * 7 + "\x03")
text = open(kubeconfig).read()
text = re.sub(r"(-data: )\S+", lambda m: m.group(1) + "LS0tLS1CRUdJTiBGVVpaLS0tLS0K", text)
put("kubeconfig", "controlplane", "\x00" + text)
PY
echo "recorded into $root/fuzz/corpus" >&2
