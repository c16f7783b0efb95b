# flow.inplace: restartStrategy Auto on a node that declares RestartAllContainersOnContainerExits
# (testnode does, as 1.36+ kubelets): one rank's trainer is SIGKILLed mid-run and attempt 2 runs on
# the same pods, restarted in place (every container once, an emptyDir kept), with a new id that
# every rank logs as attempt 2; a second SIGKILL gives attempt 3 the same way; Succeeded.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  if ! k get node "$node" -o 'jsonpath={.status.declaredFeatures}' | grep -q RestartAllContainersOnContainerExits; then
    echo "SKIP: this API server keeps no Node declaredFeatures (Kubernetes 1.35): restartStrategy Auto recreates pods (flow.kill covers that)"
    exit 77
  fi
  # Each pod counts its starts in an emptyDir, which a restart in place keeps: the first two starts
  # (attempts 1 and 2) "train" for 120 s, the third ends at once.
  pod_spec="      volumes: [{name: scratch, emptyDir: {}}]" \
  trainer_extra="        volumeMounts: [{name: scratch, mountPath: /scratch}]" \
    trainer_job ip 3 'n=$(( $(cat /scratch/starts 2>/dev/null || echo 0) + 1 )); echo $n > /scratch/starts; if [ $n -le 2 ]; then l=120; else l=0; fi; exec nccl-allreduce --linger-seconds $l'
  wait_ids ip 1
  check_ranks ip 1
  check "attempt 1 restarts in place" "$(nj ip '{.status.restartStrategy}')" InPlace
  uids1=$(k get pods -l nccl.dev/job-name=ip -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.uid} {end}')
  id1=$(k get configmap ip-nccl -o 'jsonpath={.data.uniqueId}')

  signal ip-2 KILL && pass "SIGKILL to ip-2's trainer" || fail "debug kill refused"
  wait_for 60 "attempt 2 started" nj_is ip '{.status.attempt}' 2
  wait_ids ip 2
  check_ranks ip 2
  uids2=$(k get pods -l nccl.dev/job-name=ip -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.uid} {end}')
  check "attempt 2 runs on the same pods" "$uids2" "$uids1"
  check "every container restarted once" \
    "$(k get pods -l nccl.dev/job-name=ip -o 'jsonpath={range .items[*]}{.status.initContainerStatuses[0].restartCount}{.status.containerStatuses[0].restartCount} {end}')" "11 11 11 11 "
  id2=$(k get configmap ip-nccl -o 'jsonpath={.data.uniqueId}')
  [ -n "$id2" ] && [ "$id1" != "$id2" ] && pass "attempt 2 has a new id" || fail "the id did not change"
  check "restarts after one kill" "$(nj ip '{.status.restarts}')" 1

  signal ip-1 KILL && pass "SIGKILL to ip-1's trainer in attempt 2" || fail "debug kill refused"
  wait_for 60 "attempt 3 started" nj_is ip '{.status.attempt}' 3
  wait_ids ip 3
  check_ranks ip 3
  check "attempt 3 runs on the same pods" \
    "$(k get pods -l nccl.dev/job-name=ip -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.uid} {end}')" "$uids1"
  check "restarts after two kills" "$(nj ip '{.status.restarts}')" 2
  describe=$(k describe nj ip)
  contains "describe: restarting in place" "$describe" "in place"
  contains "describe: names the killed pod" "$describe" ip-1
  no_id_in_logs ip
  wait_for 60 "ip Succeeded" state_is ip Succeeded
}
