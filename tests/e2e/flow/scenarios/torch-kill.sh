# flow.torch-kill: the same, one rank SIGKILLed while attempt 1 trains: attempt 2, new rendezvous,
# Succeeded.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  torch_setup
  torch_job tkill "$flow_root/tests/e2e/flow/torch_trainer.py" --linger-attempt-1 120
  for i in 0 1 2 3; do
    wait_for 300 "tkill-$i summed in attempt 1" sh -c "'$kubectl' -n '$ns' logs tkill-$i -c trainer | grep -q 'attempt 1: all_reduce'"
  done
  check_torch_ranks tkill 1
  id1=$(k get configmap tkill-nccl -o 'jsonpath={.data.uniqueId}' | sha256sum)
  signal tkill-2 KILL \
    && pass "SIGKILL to tkill-2's trainer" || fail "debug kill refused"
  wait_for 60 "attempt 2 started" nj_is tkill '{.status.attempt}' 2
  wait_for 300 "tkill Succeeded after the restart" state_is tkill Succeeded
  check "restarts" "$(nj tkill '{.status.restarts}')" 1
  check_torch_ranks tkill 2
  # The node may give the new root the old one's IP; the id (fresh magic per attempt) must change.
  id2=$(k get configmap tkill-nccl -o 'jsonpath={.data.uniqueId}' | sha256sum)
  [ "$id1" != "$id2" ] && pass "attempt 2 rendezvoused through a new id" || fail "the id did not change"
  contains "describe names the killed pod" "$(k describe nj tkill)" tkill-2
}
