# flow.kill: one rank's trainer is SIGKILLed mid-run, restartStrategy Recreate: attempt 2 with new
# pods and a new id, then Succeeded; kubectl describe nj explains the restart. (flow.inplace: the
# same restarted in place, the default where nodes can.)
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  # Attempt 1 "trains" for 120 s after the id part; later attempts finish at once.
  restart_strategy=Recreate trainer_job kill 3 'if [ "$NCCLJOB_ATTEMPT" = 1 ]; then l=120; else l=0; fi; exec nccl-allreduce --linger-seconds $l'
  wait_ids kill 1
  check_ranks kill 1; root1=$first_root
  old_uids=$(k get pods -l nccl.dev/job-name=kill -o 'jsonpath={.items[*].metadata.uid}')
  id1=$(k get configmap kill-nccl -o 'jsonpath={.data.uniqueId}' | sha256sum)
  check "still attempt 1 mid-run" "$(nj kill '{.status.state}/{.status.attempt}')" Running/1
  check "restartStrategy Recreate" "$(nj kill '{.status.restartStrategy}')" Recreate
  signal kill-2 KILL \
    && pass "SIGKILL to kill-2's trainer" || fail "debug kill refused"
  wait_for 60 "attempt 2 started" nj_is kill '{.status.attempt}' 2
  wait_for 60 "kill Succeeded after the restart" state_is kill Succeeded
  check "restarts" "$(nj kill '{.status.restarts}')" 1
  check "a crash is no disruption" "$(nj kill '{.status.disruptions}')" 0
  new_uids=$(k get pods -l nccl.dev/job-name=kill -o 'jsonpath={.items[*].metadata.uid}')
  common=$(comm -12 <(tr ' ' '\n' <<<"$old_uids" | sort) <(tr ' ' '\n' <<<"$new_uids" | sort) | grep -c . || true)
  check "attempt 2 runs on new pods (no pod UID of attempt 1)" "$common" 0
  check "attempt 2 pods labelled" "$(k get pods -l nccl.dev/job-name=kill,nccl.dev/attempt=2 -o name | wc -l)" 4
  id2=$(k get configmap kill-nccl -o 'jsonpath={.data.uniqueId}' | sha256sum)
  [ "$id1" != "$id2" ] && pass "attempt 2 has a new id" || fail "the id did not change"
  check_ranks kill 2
  [ "$first_root" != "$root1" ] && pass "attempt 2 root $first_root differs from $root1" || fail "same root $root1"
  describe=$(k describe nj kill)
  contains "describe: Restarting event" "$describe" Restarting
  contains "describe: names the killed pod" "$describe" kill-2
  contains "describe: gives the exit code" "$describe" 137
  no_id_in_logs kill
}
