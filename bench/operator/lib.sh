# Sourced by the operator memory measurements (bench/operator/rss.sh on the test control plane,
# tests/harness/realnode/measure.sh in its container on the real node): the same load and the same
# readings of a process.
#
#   load_manifests <jobs> <replicas> <image>   NcclJobs job-0..job-<jobs-1> of <replicas> pods
#                        asking 8 GPUs each: no test node has GPUs, so the pods exist and stay
#                        Pending; initTimeoutSeconds 3600 keeps them one attempt while measured
#   wait_pod_count <seconds> <want> <command...>   polls until the command (a `get pods
#                        --no-headers`) lists at least <want> lines; 1 after the deadline
#   proc_kib <pid> <field>   a field of /proc/<pid>/status in KiB (VmRSS, VmHWM, RssAnon, RssFile)
#   mib <KiB>            KiB as MiB, one decimal
#   proc_mem <pid>       "VmRSS (RssAnon anon + RssFile file); peak VmHWM", MiB

load_manifests() {
  local i
  for i in $(seq 0 $(($1 - 1))); do
    cat <<YAML
---
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: job-$i}
spec:
  replicas: $2
  gpusPerPod: 8
  initTimeoutSeconds: 3600
  template:
    spec:
      containers:
        - {name: trainer, image: $3, command: [nccl-allreduce]}
YAML
  done
}

wait_pod_count() {
  local deadline=$(( $(date +%s) + $1 )) want=$2; shift 2
  until [ "$("$@" 2>/dev/null | wc -l)" -ge "$want" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

proc_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
mib() { awk -v v="$1" 'BEGIN {printf "%.1f", v / 1024}'; }
proc_mem() {
  echo "$(mib "$(proc_kib "$1" VmRSS)") ($(mib "$(proc_kib "$1" RssAnon)") anon + $(mib "$(proc_kib "$1" RssFile)") file); peak $(mib "$(proc_kib "$1" VmHWM)")"
}
