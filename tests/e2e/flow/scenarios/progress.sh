# flow.progress: trainers report their steps (nccl-allreduce once a second while it lingers; a
# Python trainer as fast as it can) and the job shows the newest in status.progress and the
# PROGRESS column, at a bounded rate of writes; with failurePolicy.stallTimeoutSeconds, one rank
# stopped (SIGSTOP: hung, not dead) while the others go on ends the attempt as Stalled naming it,
# restarted in place (ps) and by recreation (pr), and the next attempt gets a new id; a job whose
# trainers never report is never called stalled.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

progress_of() { nj "$1" '{.status.progress.summary}'; }
shows_progress() { case "$(progress_of "$1")" in *"/$2 ("*%")") return 0 ;; esac; return 1; }
has_progress() { [ -n "$(progress_of "$1")" ]; }
step_beyond() { [ "$(nj "$1" '{.status.progress.step}')" -gt "$2" ]; }
stall_events() { k get events --field-selector "involvedObject.name=$1,reason=Restarting" -o 'jsonpath={.items[*].message}'; }

scenario() {
  # Attempt 1 "trains" for 120 s, reporting a step a second; later attempts end after 3 s. ps
  # counts its starts in an emptyDir (a restart in place keeps it); pr reads its attempt.
  stall_timeout=6 pod_spec="      volumes: [{name: scratch, emptyDir: {}}]" \
  trainer_extra="        volumeMounts: [{name: scratch, mountPath: /scratch}]" \
    trainer_job ps 3 'n=$(( $(cat /scratch/starts 2>/dev/null || echo 0) + 1 )); echo $n > /scratch/starts; if [ $n -le 1 ]; then l=120; else l=3; fi; exec nccl-allreduce --linger-seconds $l'
  stall_timeout=6 restart_strategy=Recreate \
    trainer_job pr 3 'if [ "$NCCLJOB_ATTEMPT" = 1 ]; then l=120; else l=3; fi; exec nccl-allreduce --linger-seconds $l'
  # Never reports: never stalled, however short the timeout.
  stall_timeout=1 trainer_job quiet 3 'sleep 8'
  wait_ids ps 1
  wait_ids pr 1
  wait_for 30 "ps shows its progress (step/120)" shows_progress ps 120
  wait_for 30 "pr shows its progress (step/120)" shows_progress pr 120
  contains "kubectl get nj: PROGRESS column" "$(k get nj ps)" PROGRESS
  contains "kubectl get nj: the step" "$(k get nj ps)" "/120 ("
  contains "kubectl describe nj: the progress" "$(k describe nj ps)" "Total Steps:"
  step1=$(nj ps '{.status.progress.step}')
  wait_for 15 "ps's step moves" step_beyond ps "$step1"
  check "ps restarts in place" "$(nj ps '{.status.restartStrategy}')" InPlace

  signal ps-1 19 && pass "SIGSTOP to ps-1's trainer" || fail "debug signal refused"
  signal pr-2 19 && pass "SIGSTOP to pr-2's trainer" || fail "debug signal refused"
  stopped=$(date +%s)
  wait_for 40 "ps: attempt 2 started" nj_is ps '{.status.attempt}' 2
  wait_for 40 "pr: attempt 2 started" nj_is pr '{.status.attempt}' 2
  echo "     attempts 2 within $(( $(date +%s) - stopped )) s of the stops (stallTimeoutSeconds 6)"
  events=$(stall_events ps)
  contains "ps: the restart says stalled, naming the pod" "$events" "attempt 1 stalled (pod ps-1: stalled: rank 1 sent no progress report for "
  contains "ps: ... and its last step" "$events" "(last step "
  contains "pr: the restart names the stopped pod" "$(stall_events pr)" "attempt 1 stalled (pod pr-2: stalled: rank 2 sent no progress report for "
  check "ps: a stall is a restart" "$(nj ps '{.status.restarts}')" 1
  check "pr: a stall is a restart" "$(nj pr '{.status.restarts}')" 1
  wait_ids ps 2
  wait_ids pr 2
  wait_for 60 "ps Succeeded" state_is ps Succeeded
  wait_for 60 "pr Succeeded" state_is pr Succeeded
  check "pr: attempt 2 on new pods" "$(k get pods -l nccl.dev/job-name=pr,nccl.dev/attempt=2 -o name | wc -l)" 4
  wait_for 60 "quiet Succeeded" state_is quiet Succeeded
  check "quiet: never stalled" "$(nj quiet '{.status.restarts}/{.status.progress}')" "0/"

  # A burst of reports (pod 0's trainer, as fast as Python sends for 20 s, after the id) writes the
  # job's status at most every 5 s: a watch of the running job (its pods ready) sees at most 3
  # updates in 10 s of it, each a new progress (and at least one: the progress moves).
  trainer_job burst 3 "nccl-allreduce --linger-seconds 0 && exec $build/python-venv/bin/python $flow_root/tests/e2e/flow/burst_trainer.py 20"
  wait_for 60 "burst reports" has_progress burst
  wait_for 30 "burst's 4 pods ready" nj_is burst '{.status.ready}' 4
  seen=$( { timeout 10 "$kubectl" -n "$ns" get nj burst --watch-only \
    -o 'jsonpath={.status.ready} {.status.progress.time} {.status.progress.step}{"\n"}' 2>/dev/null || true; })
  echo "$seen" | sed 's/^/     update: ready, progress time, step: /'
  updates=$(grep -c . <<<"$seen" || true)
  writes=$(awk '{print $2}' <<<"$seen" | uniq | grep -c . || true)
  [ "$writes" -ge 1 ] && [ "$writes" -le 3 ] \
    && pass "a burst writes the progress at most every 5 s ($writes in 10 s)" \
    || fail "$writes progress writes in 10 s of a burst (want 1 to 3)"
  [ "$updates" -le 3 ] && pass "... and nothing else of the job ($updates updates in 10 s)" \
    || fail "$updates updates of the job in 10 s of a burst"
  wait_for 60 "burst Succeeded" state_is burst Succeeded
  reported=$(k logs burst-0 -c trainer | sed -n 's/^reported \([0-9]*\) steps$/\1/p')
  [ "${reported:-0}" -gt 10000 ] && pass "burst-0 sent $reported reports" || fail "burst-0 sent '${reported}' reports"
}
