# flow.roots: network.bootstrapRoots 2 for 4 one-rank pods: pods 0 and 2 each post an id, the
# ConfigMap holds both in root order, every rank logs the same two roots: Succeeded.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  # Two bootstrap roots for 4 one-rank pods: pods 0 and 2 each make an id (NCCL's first rank of
  # blocks 0-1 and 2-3); the operator publishes both, in root order, once both are in.
  job_spec="  initTimeoutSeconds: 60
  network: {bootstrapRoots: 2}" nccl_job roots '[nccl-allreduce]'
  wait_for 60 "roots Succeeded" state_is roots Succeeded
  check "condition IdPublished" "$(nj roots '{.status.conditions[?(@.type=="IdPublished")].status}')" True
  list=$(k get configmap roots-nccl -o 'jsonpath={.data.uniqueId}')
  check "ConfigMap roots-nccl holds 2 ids" "$(tr ',' '\n' <<<"$list" | grep -c .)" 2
  for id in $(tr ',' ' ' <<<"$list"); do
    check "each id is 128 bytes of base64" "$(base64 -d <<<"$id" | wc -c)" 128
  done
  check "pod 0 and pod 2 reported ids, pods 1 and 3 none" \
    "$(for i in 0 1 2 3; do k get pod roots-$i -o 'jsonpath={.metadata.annotations.nccl\.dev/unique-id-attempt}'; echo -n /; done)" "1//1//"
  check "every pod has NCCLJOB_BOOTSTRAP_ROOTS=2" \
    "$(k get pods -l nccl.dev/job-name=roots -o jsonpath='{range .items[*]}{.spec.containers[0].env[?(@.name=="NCCLJOB_BOOTSTRAP_ROOTS")].value}{end}')" 2222
  ip0=$(k get pod roots-0 -o 'jsonpath={.status.podIP}'); ip2=$(k get pod roots-2 -o 'jsonpath={.status.podIP}')
  lists=""
  for i in 0 1 2 3; do
    line=$(k logs "roots-$i" -c trainer 2>/dev/null | grep 'ids obtained' | tail -1)
    contains "roots-$i logs rank $i, attempt 1" "$line" "rank $i of 4 pods, attempt 1,"
    roots_seen=$(sed -n 's/.* roots \([^ ]*\): ids obtained.*/\1/p' <<<"$line")
    case "$roots_seen" in "$ip0":*,"$ip2":*) pass "roots-$i: root 0 on pod 0 ($ip0), root 1 on pod 2 ($ip2)" ;;
      *) fail "roots-$i: roots '$roots_seen', want $ip0:PORT,$ip2:PORT" ;; esac
    lists="$lists$roots_seen"$'\n'
  done
  check "all ranks got the same list" "$(sort -u <<<"${lists%$'\n'}" | wc -l)" 1
  contains "the Role lets both roots patch themselves" "$(k get role roots-nccl -o 'jsonpath={.rules[1].resourceNames}')" '"roots-0","roots-2"'
}
