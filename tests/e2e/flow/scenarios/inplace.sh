# flow.inplace: restartStrategy Auto on a node that declares RestartAllContainersOnContainerExits
# (testnode does, as 1.36+ kubelets): one rank's trainer is SIGKILLed mid-run and attempt 2 runs on
# the same pods, restarted in place (every container once, an emptyDir kept), with a new id that
# every rank logs as attempt 2; a second SIGKILL gives attempt 3 the same way; Succeeded. Then a
# sidecar killed before it recorded the attempt it entered (its state file removed, then SIGKILL,
# while the root holds the id back): that pod is made again, the others restart in place, and the
# job succeeds after one restart (it used to fail each later attempt up to maxRestarts).
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

  # The root's trainer holds attempt 1's id back (its first start sleeps).
  gang_scheduling=Disabled pod_spec="      volumes: [{name: scratch, emptyDir: {}}]" \
  trainer_extra="        volumeMounts: [{name: scratch, mountPath: /scratch}]" \
    trainer_job ipr 3 'n=$(( $(cat /scratch/starts 2>/dev/null || echo 0) + 1 )); echo $n > /scratch/starts; if [ "$NCCLJOB_INDEX" = 0 ] && [ $n = 1 ]; then sleep 300; fi; exec nccl-allreduce --linger-seconds 0'
  recorded() { ls "$work"/state/pods/"${ns}"_ipr-1_*/volumes/nccl-sidecar-state/attempt; }
  wait_for 60 "ipr-1's sidecar recorded attempt 1" recorded
  uids1=$(k get pods -l nccl.dev/job-name=ipr -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.uid} {end}')
  rm -f "$(recorded)"
  signal ipr-1 KILL nccl-sidecar && pass "SIGKILL to ipr-1's sidecar, its record removed" || fail "debug kill refused"
  wait_for 60 "attempt 2 started" nj_is ipr '{.status.attempt}' 2
  wait_ids ipr 2
  uids2=$(k get pods -l nccl.dev/job-name=ipr -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.uid} {end}')
  check "the pods that did not fail restart in place" "$(tr ' ' '\n' <<<"$uids2" | grep -v '^ipr-1=')" "$(tr ' ' '\n' <<<"$uids1" | grep -v '^ipr-1=')"
  [ "$(tr ' ' '\n' <<<"$uids2" | grep '^ipr-1=')" != "$(tr ' ' '\n' <<<"$uids1" | grep '^ipr-1=')" ] &&
    pass "ipr-1, failed before the id, is made again" || fail "ipr-1 kept its UID"
  wait_for 60 "ipr Succeeded" state_is ipr Succeeded
  check "restarts after one sidecar kill" "$(nj ipr '{.status.restarts}')" 1
}
