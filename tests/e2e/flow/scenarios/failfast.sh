# flow.failfast: a trainer exits with a failFastExitCodes code: Failed/FailFastExitCode, no
# attempt 2.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  # Rank 2 fails for good (exit 3, listed in failFastExitCodes) after the id part; the others train on.
  trainer_job failfast 3 'nccl-allreduce --linger-seconds $([ "$NCCLJOB_INDEX" = 2 ] && echo 0 || echo 120) || exit 1; if [ "$NCCLJOB_INDEX" = 2 ]; then echo "rank 2: unrecoverable, exit 3"; exit 3; fi'
  wait_for 60 "failfast Failed" state_is failfast Failed
  check "Failed reason" "$(nj failfast '{.status.conditions[?(@.type=="Failed")].reason}')" FailFastExitCode
  contains "Failed message names the code" "$(nj failfast '{.status.conditions[?(@.type=="Failed")].message}')" 3
  # Failed is terminal: wait until the attempt's pods are gone, then nothing new may appear.
  wait_for 60 "attempt 1 pods stopped" is "" k get pods -l nccl.dev/job-name=failfast --field-selector=status.phase=Running -o name
  check "no attempt 2 pods" "$(k get pods -l nccl.dev/job-name=failfast,nccl.dev/attempt=2 -o name)" ""
  check "attempt stays 1" "$(nj failfast '{.status.attempt}/{.status.restarts}')" 1/0
  # (attempt 1 shows as "Created"; AttemptStarted and Restarting events belong to later attempts)
  check "no Restarting or AttemptStarted event" \
    "$(k get events --field-selector involvedObject.name=failfast -o 'jsonpath={.items[*].reason}' | tr ' ' '\n' | grep -c -e '^Restarting$' -e '^AttemptStarted$' || true)" 0
  contains "describe: FailFastExitCode event" "$(k describe nj failfast)" FailFastExitCode
}
