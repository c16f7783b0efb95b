#!/usr/bin/env bash
# GPU tests of the runtime through real sidecar processes on loopback (sidecar --standalone).
#   gpu-tests.sh BIN_DIR SIDECAR [LOG_DIR]
# BIN_DIR holds nccl-allreduce; SIDECAR is the nccl-sidecar binary. Exit 0 all passed, 1 a test
# failed, 77 skipped (no GPU: CTest reports it as skipped, with the reason printed). One GPU runs
# everything but the two-GPU shapes and netns_pods.
# Tests:
#   shape_PxG_MODE      for each PxG in $SHAPES (default "2x1 1x2"; "1x1" on one GPU) and each MODE in
#                       $GPU_TESTS_COMM_MODES (default "nonblocking blocking", NCCL_K8S_COMM_MODE):
#                       P pods (processes) x G GPUs, P sidecars (root + peers): communicators of
#                       that mode and correct sums everywhere. Shapes needing more GPUs
#                       than the machine has are skipped. 4/8 GPUs: SHAPES="2x2 1x4" or "2x4 4x2 8x1".
#   missing_rank_MODE   world of 2, only the root starts: it ends within deadline + 1 s, naming the cause
#                       (blocking: the init watchdog ends it with 124; non-blocking: aborted, exit 1)
#   hung_init_MODE      world of 2: the root posts the id, starts its init, and is stopped (SIGSTOP);
#                       rank 1's init hangs and ends within deadline + 1 s likewise
#   missing_root_abort  world of 2, only rank 1 starts: no id comes; it gives up within deadline + 1 s
#   scalable_PxG_rootsR_blocking  for each PxG:R in $SCALABLE_SHAPES (default "1x1:1"; "2x1:2 1x1:1" on 2+ GPUs):
#                       NCCLJOB_BOOTSTRAP_ROOTS=R, communicators from ncclCommInitRankScalable
#                       with R ids, correct sums
#   python: cupy_*, torch_*, cupy_missing_root   tests/gpu/python-gpu-tests.sh (nccl_k8s with CuPy and
#                       PyTorch's NCCL backend; skipped where python3 lacks cupy/torch)
#   netns_pods          tests/gpu/netns-pods.sh: two pods as network namespaces on a bridge (eth0 =
#                       veth with the pod IP): the runtime picks eth0, NCCL bootstraps over it, sums
#                       correct (skipped without root / ip netns)
set -uo pipefail
bin="${1:?usage: gpu-tests.sh BIN_DIR SIDECAR [LOG_DIR]}"
sidecar="${2:?usage: gpu-tests.sh BIN_DIR SIDECAR [LOG_DIR]}"
logs="${3:-$(mktemp -d)}"
mkdir -p "${logs}"
export NCCL_NVLS_ENABLE=0   # the device machines forbid NVLink multicast

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[[ -n "${GPU_TESTS_FAKE_GPUS:-}" ]] && gpus=${GPU_TESTS_FAKE_GPUS}  # exercise the script's plumbing without GPUs
if [[ "${gpus:-0}" -lt 1 ]]; then
  echo "SKIPPED: GPU tests need an NVIDIA GPU, found none (run tests/gpu/run-on-device.sh on a GPU machine)"
  exit 77
fi
if [[ ! -x "${sidecar}" ]]; then
  echo "FAILED: sidecar binary '${sidecar}' not found"; exit 1
fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

source "$(dirname "${BASH_SOURCE[0]}")/sidecars.sh"   # start_sidecar

# trainer_env INDEX WORLD GPUS ATTEMPT PORT TIMEOUT
trainer_env() {
  echo "NCCLJOB_NAME=gputest NCCLJOB_INDEX=$1 NCCLJOB_WORLD_SIZE=$2 NCCLJOB_GPUS_PER_POD=$3 NCCLJOB_ATTEMPT=$4 NCCLJOB_SIDECAR_URL=http://127.0.0.1:$5 NCCLJOB_INIT_TIMEOUT_SECONDS=$6 NCCLJOB_POD_IP=127.0.0.1"
}

passed=0; failed=0
result() { if [[ $1 -eq 0 ]]; then echo "PASS $2"; passed=$((passed+1)); else echo "FAIL $2: $3"; failed=$((failed+1)); fi; }

sweep=(--min-bytes 1M --max-bytes "${GPU_TESTS_MAX_BYTES:-1G}" --iters 20)

# ---- shapes: PODS pods x GPUS GPUs per pod ------------------------------------------------------
# Pod p is one process with its own sidecar (pod 0's is the root, the others fetch the id from it
# with --peer-url) and sees GPUs p*GPUS .. p*GPUS+GPUS-1 through CUDA_VISIBLE_DEVICES.
# With GPU_TESTS_FAKE_GPUS (no GPU here) a trainer that did the id part and skipped the GPU part
# counts as a pass of the plumbing.
accept_out() {  # accept_out FILE MODE: the trainer's output shows success on communicators of MODE
  local label="blocking"; [[ "$2" == nonblocking ]] && label="non-blocking"
  grep -q "of [0-9]*, ${label} communicators" "$1" && grep -q "all sums correct" "$1" && return 0
  [[ -n "${GPU_TESTS_FAKE_GPUS:-}" ]] && grep -q "GPU part skipped" "$1"
}
run_shape() {  # run_shape PODS GPUS MODE [ROOTS] (NCCL_K8S_COMM_MODE; NCCLJOB_BOOTSTRAP_ROOTS)
  local pods=$1 per=$2 mode=$3 roots=${4:-} world=$(( $1 * $2 )) name="shape_$1x$2_$3" p
  [[ -n "$roots" ]] && name="scalable_$1x$2_roots${roots}_$3"
  local -x NCCLJOB_BOOTSTRAP_ROOTS=$roots   # to sidecars and trainers; empty = unset (one root, ncclCommInitRankConfig)
  [[ -z "$roots" ]] && unset NCCLJOB_BOOTSTRAP_ROOTS
  if [[ $world -gt $gpus ]]; then echo "SKIP ${name}: needs ${world} GPUs, ${gpus} here"; return; fi
  local ports=() root_url="" fixed=() root_urls=""
  if [[ -n "$roots" && $roots -gt 1 ]]; then
    # Several roots without the operator: every sidecar asks each root sidecar (--root-urls, root
    # order) for its id, so the root sidecars' ports are chosen up front.
    read -r -a fixed <<<"$(free_ports "$pods")"
    local r
    for (( r = 0; r < roots; r++ )); do
      local first_rank=$(( r * (world / roots) + (r < world % roots ? r : world % roots) ))
      root_urls+="${root_urls:+,}http://127.0.0.1:${fixed[$(( first_rank / per ))]}"
    done
  fi
  for (( p = 0; p < pods; p++ )); do
    local started=0
    if [[ -n "$root_urls" ]]; then
      SIDECAR_PORT=${fixed[$p]} SIDECAR_ARGS="--root-urls ${root_urls}" start_sidecar "${name}-sidecar$p" "$p" "$world" "$per" 1 && started=1
    else
      start_sidecar "${name}-sidecar$p" "$p" "$world" "$per" 1 "$root_url" && started=1
    fi
    if [[ $started -eq 0 ]]; then
      result 1 "$name" "sidecar $p did not start"; cleanup; pids=(); return
    fi
    ports+=("$port")
    [[ $p -eq 0 ]] && root_url="http://127.0.0.1:${port}"
  done
  local trainers=()
  for (( p = 0; p < pods; p++ )); do
    local visible
    visible=$(seq -s, $(( p * per )) $(( p * per + per - 1 )))
    env $(trainer_env "$p" "$world" "$per" 1 "${ports[$p]}" 60) CUDA_VISIBLE_DEVICES="$visible" NCCL_K8S_COMM_MODE="$mode" \
      timeout "${GPU_TESTS_TRAINER_TIMEOUT:-150}" "${bin}/nccl-allreduce" "${sweep[@]}" \
      >"${logs}/${name}-pod$p.out" 2>"${logs}/${name}-pod$p.err" &
    trainers+=($!)
  done
  local ok=0 rcs="" rc
  for (( p = 0; p < pods; p++ )); do
    wait "${trainers[$p]}"; rc=$?; rcs+="${rc} "
    [[ $rc -eq 0 ]] && accept_out "${logs}/${name}-pod$p.out" "$mode" || ok=1
    # NCCLJOB_BOOTSTRAP_ROOTS given: the communicators must come from ncclCommInitRankScalable with that many ids.
    [[ -n "$roots" && -z "${GPU_TESTS_FAKE_GPUS:-}" ]] && ! grep -q "ncclCommInitRankScalable, ${roots} id(s)" "${logs}/${name}-pod$p.out" && ok=1
  done
  result $ok "$name" "exit codes ${rcs}; see ${logs}/${name}-pod*.err"
  echo "  ${name}: ${pods} pod(s) x ${per} GPU(s), world ${world}; pod 0:"
  sed 's/^/    /' "${logs}/${name}-pod0.out"
  cleanup; pids=()
}

default_shapes="2x1 1x2"; [[ $gpus -lt 2 ]] && default_shapes="1x1"
for shape in ${SHAPES:-$default_shapes}; do
  if [[ ! "$shape" =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]]; then result 1 "shape_${shape}" "bad shape (want PODSxGPUS)"; continue; fi
  for mode in ${GPU_TESTS_COMM_MODES:-nonblocking blocking}; do
    run_shape "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "$mode"
  done
done

# ---- ncclCommInitRankScalable (NCCLJOB_BOOTSTRAP_ROOTS given): PODSxGPUS:ROOTS in $SCALABLE_SHAPES,
# default "1x1:1" on one GPU (one rank, one root: the scalable path with one id), "2x1:2 1x1:1"
# on two or more (two pods, each a root that makes an id; every sidecar gathers both from the root
# sidecars, --root-urls, and every rank inits with both in root order).
default_scalable="1x1:1"; [[ $gpus -ge 2 ]] && default_scalable="2x1:2 1x1:1"
for shape in ${SCALABLE_SHAPES:-$default_scalable}; do
  if [[ ! "$shape" =~ ^([1-9][0-9]*)x([1-9][0-9]*):([1-9][0-9]*)$ ]]; then result 1 "scalable_${shape}" "bad shape (want PODSxGPUS:ROOTS)"; continue; fi
  run_shape "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" blocking "${BASH_REMATCH[3]}"
done

# ---- the deadline: a rank that never arrives, a root that never posts, an init that hangs ----------
# Each must end the trainer within deadline + 1 s with a message naming the cause. Blocking
# communicators (the default) end the process from the init watchdog (exit 124); non-blocking ones
# are aborted and the trainer exits 1.
deadline=5
second_gpu=$(( gpus > 1 ? 1 : 0 ))   # a lone rank 1 never gets past the id or the bootstrap: one GPU does
# check_deadline NAME RC ELAPSED WANT_RC LOG PATTERN...: the exit code, the time and every pattern in LOG
check_deadline() {
  local name=$1 rc=$2 elapsed=$3 want=$4 log=$5 ok=0 p; shift 5
  [[ $rc -eq $want ]] || ok=1
  awk -v e="$elapsed" -v d="$deadline" 'BEGIN{exit !(e <= d + 1)}' || ok=1
  for p in "$@"; do grep -q -- "$p" "$log" || ok=1; done
  result $ok "$name" "rc=$rc (want $want) elapsed=${elapsed}s (limit $((deadline + 1))s); see $log"
  echo "  ${name}: exit $rc after ${elapsed}s (deadline ${deadline}s); message:"
  grep -E "nccl-allreduce:|nccl-k8s: (rank|communicator)" "$log" | tail -2 | sed 's/^/    /'
}
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN{printf "%.2f", a-b}'; }
want_rc() { [[ "$1" == nonblocking ]] && echo 1 || echo 124; }

deadline_modes=${GPU_TESTS_COMM_MODES:-nonblocking blocking}
[[ -n "${GPU_TESTS_FAKE_GPUS:-}" ]] && deadline_modes=""   # these need a real NCCL init
for mode in ${deadline_modes}; do
  # A rank that never arrives: world of 2, only the root starts; it waits in NCCL's bootstrap.
  name="missing_rank_${mode}"
  if start_sidecar "mr-${mode}-sidecar0" 0 2 1 1; then
    start=$(date +%s.%N)
    env $(trainer_env 0 2 1 1 "$port" $deadline) CUDA_VISIBLE_DEVICES=0 NCCL_K8S_COMM_MODE="$mode" \
      timeout 150 "${bin}/nccl-allreduce" >"${logs}/${name}.out" 2>"${logs}/${name}.err"
    rc=$?
    check_deadline "$name" $rc "$(since "$start")" "$(want_rc "$mode")" "${logs}/${name}.err" "before the deadline" "ranks never joined"
  else
    result 1 "$name" "sidecar did not start"
  fi
  cleanup; pids=()

  # An init that hangs: the root posts the id, starts its init and then stops (SIGSTOP); rank 1
  # connects to the root's bootstrap socket (the kernel accepts it) and waits for an answer that
  # never comes.
  name="hung_init_${mode}"
  root_port=""; peer_port=""
  start_sidecar "hi-${mode}-sidecar0" 0 2 1 1 && root_port=$port && \
    start_sidecar "hi-${mode}-sidecar1" 1 2 1 1 "http://127.0.0.1:${root_port}" && peer_port=$port
  if [[ -n "${peer_port}" ]]; then
    env $(trainer_env 0 2 1 1 "$root_port" 60) CUDA_VISIBLE_DEVICES=0 NCCL_K8S_COMM_MODE="$mode" \
      "${bin}/nccl-allreduce" >"${logs}/${name}-root.out" 2>"${logs}/${name}-root.err" &
    root_pid=$!; pids+=($root_pid)
    for _ in $(seq 1 100); do grep -q "id obtained" "${logs}/${name}-root.out" && break; sleep 0.1; done
    kill -STOP "$root_pid"
    start=$(date +%s.%N)
    env $(trainer_env 1 2 1 1 "$peer_port" $deadline) CUDA_VISIBLE_DEVICES=$second_gpu NCCL_K8S_COMM_MODE="$mode" \
      timeout 150 "${bin}/nccl-allreduce" >"${logs}/${name}.out" 2>"${logs}/${name}.err"
    rc=$?
    check_deadline "$name" $rc "$(since "$start")" "$(want_rc "$mode")" "${logs}/${name}.err" "before the deadline" "ranks never joined"
    kill -CONT "$root_pid" 2>/dev/null
  else
    result 1 "$name" "sidecars did not start"
  fi
  cleanup; pids=()
done

# A root that never posts: world of 2, only rank 1 starts; no id comes from the sidecar (the same
# in both modes: this happens before any communicator exists).
root_port=""; peer_port=""
start_sidecar mo-sidecar0 0 2 1 1 && root_port=$port && \
  start_sidecar mo-sidecar1 1 2 1 1 "http://127.0.0.1:${root_port}" && peer_port=$port
if [[ -n "${peer_port:-}" ]]; then
  start=$(date +%s.%N)
  env $(trainer_env 1 2 1 1 "$peer_port" $deadline) CUDA_VISIBLE_DEVICES=$second_gpu timeout 150 "${bin}/nccl-allreduce" >"${logs}/mo.out" 2>"${logs}/mo.err"
  check_deadline missing_root_abort $? "$(since "$start")" 1 "${logs}/mo.err" "deadline"
else
  result 1 missing_root_abort "sidecars did not start"
fi

# ---- two pods as network namespaces: eth0 chosen from the pod IP, NCCL over it ------------------
cleanup; pids=()
if [[ -z "${GPU_TESTS_FAKE_GPUS:-}" ]]; then
  "$(dirname "${BASH_SOURCE[0]}")/netns-pods.sh" "${bin}" "${sidecar}" "${logs}/netns"
  case $? in
    0) passed=$((passed+1)) ;;
    77) ;;  # said SKIPPED and why
    *) failed=$((failed+1)) ;;
  esac
fi

# ---- Python: the nccl_k8s package with CuPy and PyTorch (NCCL backend) through real sidecars ------
if [[ -z "${GPU_TESTS_FAKE_GPUS:-}" ]]; then
  "$(dirname "${BASH_SOURCE[0]}")/python-gpu-tests.sh" "${sidecar}" "${logs}/python"
  rc=$?
  if [[ $rc -ne 77 ]]; then
    py_passed=$(grep -c '^PASS' "${logs}/python/summary.txt" 2>/dev/null); py_failed=$(grep -c '^FAIL' "${logs}/python/summary.txt" 2>/dev/null)
    passed=$(( passed + ${py_passed:-0} )); failed=$(( failed + ${py_failed:-0} ))
    [[ $rc -ne 0 && ! -s "${logs}/python/summary.txt" ]] && failed=$((failed+1))
  fi
fi

echo "${passed} passed, ${failed} failed"
[[ $failed -eq 0 ]]
