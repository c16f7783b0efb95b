#!/usr/bin/env bash
# The Python package (python/src/nccl_k8s) with frameworks somebody else wrote, on GPUs, through
# real `nccl-sidecar --standalone` processes on loopback. Run by gpu-tests.sh.
#   python-gpu-tests.sh SIDECAR [LOG_DIR]
# Exit 0 all passed, 1 a test failed, 77 skipped (no GPU, or python3 has neither cupy nor torch).
# Writes PASS/FAIL/SKIP lines to LOG_DIR/summary.txt too. Tests (P pods x 1 GPU, one process each):
#   cupy_Px1           nccl_k8s.cupy_comms.communicators(): the root's id from
#                      cupy.cuda.nccl.get_unique_id, posted to its sidecar, fetched by the others;
#                      an allReduce checked on every rank
#   torch_nccl_Px1     nccl_k8s.pytorch.init_process_group("nccl"): MASTER_ADDR from the root's id,
#                      NCCL_SOCKET_IFNAME chosen by the package (lo here: NCCLJOB_POD_IP=127.0.0.1);
#                      an all_reduce on the GPU checked
#   cupy_missing_root  world of 2, only rank 1 starts and its root never posts: the package raises
#                      DeadlineExceededError at the deadline (5 s, limit 6 s), naming the cause
# P is 1 on one GPU; with two or more GPUs each runs as 2x1 too (PY_SHAPES overrides: "1 2").
set -uo pipefail
sidecar="${1:?usage: python-gpu-tests.sh SIDECAR [LOG_DIR]}"
logs="${2:-$(mktemp -d)}"
mkdir -p "${logs}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${here}/../.." && pwd)"
export PYTHONPATH="${repo}/python/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0
summary="${logs}/summary.txt"; : >"${summary}"

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [[ "${gpus:-0}" -lt 1 ]]; then echo "SKIPPED: needs an NVIDIA GPU" | tee -a "${summary}"; exit 77; fi
has_cupy=0; has_torch=0
python3 -c 'import cupy, cupy.cuda.nccl' 2>/dev/null && has_cupy=1
python3 -c 'import torch, torch.distributed; assert torch.cuda.is_available() and torch.distributed.is_nccl_available()' 2>/dev/null && has_torch=1
if [[ $has_cupy -eq 0 && $has_torch -eq 0 ]]; then echo "SKIPPED: python3 has neither cupy nor torch with NCCL" | tee -a "${summary}"; exit 77; fi
python3 -c 'import cupy, torch, sys; print("python", sys.version.split()[0], "cupy", cupy.__version__, "torch", torch.__version__, "torch nccl", torch.cuda.nccl.version())' 2>&1 | tail -1

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; pids=(); }
trap cleanup EXIT
source "${here}/sidecars.sh"

passed=0; failed=0
result() {
  local line
  if [[ $1 -eq 0 ]]; then line="PASS $2"; passed=$((passed+1)); else line="FAIL $2: $3"; failed=$((failed+1)); fi
  echo "$line"; echo "$line" >>"${summary}"
}
skip() { echo "SKIP $1: $2"; echo "SKIP $1: $2" >>"${summary}"; }

# trainer_env INDEX WORLD PORT TIMEOUT: one GPU a pod
trainer_env() {
  echo "NCCLJOB_NAME=gputest NCCLJOB_INDEX=$1 NCCLJOB_WORLD_SIZE=$2 NCCLJOB_REPLICAS=$2 NCCLJOB_GPUS_PER_POD=1 NCCLJOB_ATTEMPT=1 NCCLJOB_SIDECAR_URL=http://127.0.0.1:$3 NCCLJOB_INIT_TIMEOUT_SECONDS=$4 NCCLJOB_POD_IP=127.0.0.1"
}

# run_pods MODE PODS: PODS sidecars (pod 0's the root) and PODS trainers, GPU p for pod p.
run_pods() {
  local mode=$1 pods=$2 name="$1_$2x1" p ports=() root_url="" trainers=()
  [[ $mode == torch ]] && name="torch_nccl_${pods}x1"
  if [[ $pods -gt $gpus ]]; then skip "$name" "needs ${pods} GPUs, ${gpus} here"; return; fi
  for (( p = 0; p < pods; p++ )); do
    if ! start_sidecar "${name}-sidecar$p" "$p" "$pods" 1 1 "$root_url"; then result 1 "$name" "sidecar $p did not start"; cleanup; return; fi
    ports+=("$port"); [[ $p -eq 0 ]] && root_url="http://127.0.0.1:${port}"
  done
  local master_port=$(( 29500 + RANDOM % 1000 ))
  for (( p = 0; p < pods; p++ )); do
    env $(trainer_env "$p" "$pods" "${ports[$p]}" 60) MASTER_PORT=$master_port CUDA_VISIBLE_DEVICES=$p \
      timeout 120 python3 "${here}/python_trainer.py" "$mode" >"${logs}/${name}-pod$p.out" 2>"${logs}/${name}-pod$p.err" &
    trainers+=($!)
  done
  local ok=0 rcs="" rc expected=$(( pods * (pods + 1) / 2 ))
  for (( p = 0; p < pods; p++ )); do
    wait "${trainers[$p]}"; rc=$?; rcs+="$rc "
    [[ $rc -eq 0 ]] && grep -q "sum ${expected} (expected ${expected})" "${logs}/${name}-pod$p.out" || ok=1
  done
  result $ok "$name" "exit codes ${rcs}; see ${logs}/${name}-pod*.err"
  for (( p = 0; p < pods; p++ )); do grep -h "rank\|error" "${logs}/${name}-pod$p.out" | sed 's/^/    /'; done
  grep -h "NCCL_SOCKET_IFNAME chosen\|id(s) received\|root id" "${logs}/${name}-pod0.err" 2>/dev/null | head -3 | sed 's/^/    /'
  cleanup
}

default_shapes="1"; [[ $gpus -ge 2 ]] && default_shapes="1 2"
for pods in ${PY_SHAPES:-$default_shapes}; do
  if [[ $has_cupy -eq 1 ]]; then run_pods cupy "$pods"; else skip "cupy_${pods}x1" "python3 has no cupy"; fi
  if [[ $has_torch -eq 1 ]]; then run_pods torch "$pods"; else skip "torch_nccl_${pods}x1" "python3 has no torch with CUDA and NCCL"; fi
done

# A root that never posts: world of 2, only rank 1 starts; the package gives up at the deadline.
deadline=5
if [[ $has_cupy -eq 1 ]]; then
  name=cupy_missing_root
  if start_sidecar mr-sidecar0 0 2 1 1 && root_port=$port && start_sidecar mr-sidecar1 1 2 1 1 "http://127.0.0.1:${root_port}"; then
    env $(trainer_env 1 2 "$port" $deadline) CUDA_VISIBLE_DEVICES=$(( gpus > 1 ? 1 : 0 )) \
      timeout 60 python3 "${here}/python_trainer.py" cupy >"${logs}/${name}.out" 2>"${logs}/${name}.err"
    rc=$?
    elapsed=$(grep -o 'error after [0-9.]*' "${logs}/${name}.out" | awk '{print $3}')
    ok=0
    [[ $rc -eq 3 ]] || ok=1
    grep -q "DeadlineExceededError: deadline exceeded: no id for attempt 1" "${logs}/${name}.out" || ok=1
    awk -v e="${elapsed:-999}" -v d=$deadline 'BEGIN{exit !(e >= d - 0.5 && e <= d + 1)}' || ok=1
    result $ok "$name" "rc=$rc (want 3) elapsed=${elapsed:-?}s (deadline ${deadline}s, limit $((deadline + 1))s); see ${logs}/${name}.out"
    sed 's/^/    /' "${logs}/${name}.out"
  else
    result 1 "$name" "sidecars did not start"
  fi
  cleanup
else
  skip cupy_missing_root "python3 has no cupy"
fi

echo "python: ${passed} passed, ${failed} failed"
[[ $failed -eq 0 ]]
