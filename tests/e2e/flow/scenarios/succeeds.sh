# flow.succeeds: deploy/examples/ncclJob.yaml as is: Succeeded; all 4 ranks log attempt 1 and the
# same root address; the id never appears in a log.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  k apply -f "$flow_root/deploy/examples/ncclJob.yaml" >/dev/null
  wait_for 60 "demo Succeeded" state_is demo Succeeded
  check "condition Succeeded" "$(nj demo '{.status.conditions[?(@.type=="Succeeded")].status}')" True
  check "condition IdPublished" "$(nj demo '{.status.conditions[?(@.type=="IdPublished")].status}')" True
  check "attempt" "$(nj demo '{.status.attempt}')" 1
  check "restarts" "$(nj demo '{.status.restarts}')" 0
  contains "kubectl get nj" "$(k get nj demo --no-headers)" Succeeded
  check_ranks demo 1
  for i in 0 1 2 3; do
    contains "demo-$i: GPU part skipped, id part succeeded" "$(k logs demo-$i -c trainer)" "GPU part skipped"
  done
  no_id_in_logs demo
}
