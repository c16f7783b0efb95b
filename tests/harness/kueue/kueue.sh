#!/usr/bin/env bash
# Runs Kueue (tests/harness/kueue/build.sh) against a local control plane
# (tests/harness/controlplane), with its webhooks, on loopback: its CRDs, a serving certificate
# from the control plane's CA, and webhook configurations for Kueue's own objects that call
# https://127.0.0.1:<port>.
#   kueue.sh up --dir D     D is the control plane's dir (controlplane.sh up --dir D); state in D/kueue
#   kueue.sh down --dir D   stops Kueue and removes its webhook configurations (CRDs stay)
# Kueue runs as GPU clusters configure it: waitForPodsReady on, with blockAdmission, its timeout
# KUEUE_PODS_READY_TIMEOUT (default 20s; its recoveryTimeout is the same).
# Kueue manages no pods or Jobs here (manageJobsWithoutQueueName: false, only batch/job); the
# NcclJob operator creates the Workloads itself (docs/shared-clusters.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../controlplane/lib.sh
source "$here/../controlplane/lib.sh"
cli_parse "$@"
state="$dir/kueue"
log() { echo "[kueue] $*" >&2; }
# shellcheck source=/dev/null
cp_bin=$(. "$dir/env"; echo "$CONTROLPLANE_BIN")
kubectl() { "$cp_bin/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }

stop() {
  stop_pid_file "$state/pid"
  kubectl delete mutatingwebhookconfiguration ncclop-test-kueue --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete validatingwebhookconfiguration ncclop-test-kueue --ignore-not-found >/dev/null 2>&1 || true
}

up() {
  local kbin webhook_port health_port
  kbin=$("$here/build.sh" | tail -1)
  stop
  mkdir -p "$state/certs"
  log "CRDs"
  kubectl apply --server-side --force-conflicts -f "$kbin/crd/" >/dev/null
  for crd in "$kbin"/crd/*.yaml; do
    kubectl wait --for=condition=Established --timeout=60s -f "$crd" >/dev/null
  done
  kubectl create namespace kueue-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null

  # Serving certificate for 127.0.0.1, signed by the control plane's CA.
  (
    cd "$state/certs"
    openssl req -newkey rsa:2048 -nodes -keyout tls.key -out tls.csr -subj "/CN=kueue-webhook" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > tls.ext
    openssl x509 -req -in tls.csr -CA "$dir/pki/ca.crt" -CAkey "$dir/pki/ca.key" -CAcreateserial \
      -out tls.crt -days 3650 -extfile tls.ext 2>/dev/null
  )
  # With its own certificate management off, Kueue v0.17 reads a metrics serving pair from this
  # fixed path even when the metrics server is off (bindAddress "0"); any valid pair will do.
  local metrics_certs=/etc/kueue/metrics/certs
  if [ ! -f "$metrics_certs/tls.crt" ] || [ ! -f "$metrics_certs/tls.key" ]; then
    mkdir -p "$metrics_certs" && cp "$state/certs/tls.crt" "$state/certs/tls.key" "$metrics_certs/" \
      || { log "cannot write $metrics_certs (Kueue needs it; run as root)"; exit 1; }
  fi
  webhook_port=$(free_port); health_port=$(free_port)
  cat > "$state/config.yaml" <<YAML
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$health_port
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: $webhook_port
  certDir: $state/certs
internalCertManagement:
  enable: false
leaderElection:
  leaderElect: false
manageJobsWithoutQueueName: false
waitForPodsReady:
  timeout: ${KUEUE_PODS_READY_TIMEOUT:-20s}
  blockAdmission: true
integrations:
  frameworks: ["batch/job"]
YAML
  log "webhook configurations (Kueue's own objects) -> https://127.0.0.1:$webhook_port"
  python3 - "$kbin/webhook.yaml" "$dir/pki/ca.crt" "$webhook_port" > "$state/webhooks.yaml" <<'PY'
import base64, sys, yaml
manifests, ca, port = sys.argv[1], sys.argv[2], sys.argv[3]
bundle = base64.b64encode(open(ca, "rb").read()).decode()
out = []
for doc in yaml.safe_load_all(open(manifests)):
    if not doc:
        continue
    hooks = []
    for h in doc.get("webhooks", []):
        path = h["clientConfig"]["service"]["path"]
        if "kueue-x-k8s-io" not in path:  # the job integrations' webhooks are not needed here
            continue
        h["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
        hooks.append(h)
    doc["metadata"] = {"name": "ncclop-test-kueue"}
    doc["webhooks"] = hooks
    out.append(doc)
yaml.safe_dump_all(out, sys.stdout)
PY
  kubectl apply -f "$state/webhooks.yaml" >/dev/null

  log "starting kueue"
  nohup "$kbin/kueue" --config "$state/config.yaml" --kubeconfig "$dir/kubeconfig" \
    --feature-gates=VisibilityOnDemand=false >"$state/kueue.log" 2>&1 &
  echo $! > "$state/pid"
  local deadline=$(( $(date +%s) + 120 ))
  until curl -sf "http://127.0.0.1:$health_port/readyz" >/dev/null 2>&1 &&
        kubectl create --dry-run=server -f - >/dev/null 2>&1 <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: ncclop-webhook-probe}
YAML
  do
    if ! kill -0 "$(cat "$state/pid")" 2>/dev/null; then tail -30 "$state/kueue.log" >&2; log "kueue exited"; exit 1; fi
    if [ "$(date +%s)" -ge "$deadline" ]; then tail -30 "$state/kueue.log" >&2; log "not ready in 120s"; exit 1; fi
    sleep 0.3
  done
  log "ready (webhooks answer)"
}

case "$cmd" in
  up) up ;;
  down) stop ;;
  *) echo "kueue.sh: unknown command $cmd (up|down)" >&2; exit 2 ;;
esac
