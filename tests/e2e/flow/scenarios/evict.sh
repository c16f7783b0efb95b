# flow.evict: one pod is evicted through the Eviction API mid-run: attempt 2 with restarts 0 and
# disruptions 1; the Restarting event says it was an eviction. The job restarts in place (Auto on
# testnode) and is no gang (a gang would make every pod again): the evicted pod is made again, the
# other three keep their pods.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  # As in kill, but pod evict-2 is evicted (a node drain does this): the API server marks it
  # DisruptionTarget (EvictionByEvictionAPI) and deletes it; that is no failure of the job's own.
  # A pod's first start in attempt 1 trains for 120 s; a restart in place (the emptyDir keeps the
  # mark) or the pod made again for attempt 2 ends at once.
  gang_scheduling=Disabled pod_spec="      volumes: [{name: scratch, emptyDir: {}}]" \
  trainer_extra="        volumeMounts: [{name: scratch, mountPath: /scratch}]" \
    trainer_job evict 3 'if [ "$NCCLJOB_ATTEMPT" = 1 ] && [ ! -e /scratch/started ]; then l=120; else l=0; fi; touch /scratch/started; exec nccl-allreduce --linger-seconds $l'
  wait_ids evict 1
  uids1=$(k get pods -l nccl.dev/job-name=evict -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.uid} {end}')
  wait_for 30 "attempt 1 Running" nj_is evict '{.status.state}/{.status.attempt}' Running/1
  printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"evict-2","namespace":"%s"}}' "$ns" \
    | "$kubectl" create --raw "/api/v1/namespaces/$ns/pods/evict-2/eviction" -f - >/dev/null \
    && pass "Eviction API accepted the eviction of evict-2" || fail "eviction refused"
  wait_for 60 "attempt 2 started" nj_is evict '{.status.attempt}' 2
  wait_for 60 "evict Succeeded after the disruption" state_is evict Succeeded
  check "restarts unchanged" "$(nj evict '{.status.restarts}')" 0
  check "disruptions" "$(nj evict '{.status.disruptions}')" 1
  check "Restarting condition: the backoff followed a disruption" \
    "$(nj evict '{.status.conditions[?(@.type=="Restarting")].message}')" "backoff over after disruption 1"
  check "attempt 2 pods labelled" "$(k get pods -l nccl.dev/job-name=evict,nccl.dev/attempt=2 -o name | wc -l)" 4
  uids2=$(k get pods -l nccl.dev/job-name=evict -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.uid} {end}')
  kept=$(comm -12 <(tr ' ' '\n' <<<"$uids1" | sort) <(tr ' ' '\n' <<<"$uids2" | sort) | grep -c . || true)
  # Where the API server keeps no Node declaredFeatures (1.35), Auto recreates every pod.
  if [ "$(nj evict '{.status.restartStrategy}')" = InPlace ]; then
    check "the other three pods restarted in place (same UIDs)" "$kept" 3
  else
    check "restartStrategy Recreate (no node declares the feature): every pod made again" "$kept" 0
  fi
  old2=$(tr ' ' '\n' <<<"$uids1" | grep '^evict-2=' || true)
  tr ' ' '\n' <<<"$uids2" | grep -qx "$old2" && fail "evict-2 kept its UID" || pass "evict-2 was made again"
  events=$(k get events --field-selector involvedObject.name=evict,reason=Restarting -o 'jsonpath={.items[*].message}')
  contains "Restarting event: an eviction" "$events" "was disrupted (Eviction: pod evict-2 was evicted through the Eviction API"
  contains "Restarting event: not a restart" "$events" "not counted in failurePolicy.maxRestarts"
  contains "describe: Disruptions in kubectl get -o wide" "$(k get nj evict -o wide)" DISRUPTIONS
}
