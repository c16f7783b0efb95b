# flow.cleanup: deleting the job removes its pods, ConfigMap, Service and RBAC; helm uninstall
# removes the operator and leaves only the CRD.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  k apply -f "$flow_root/deploy/examples/ncclJob.yaml" >/dev/null
  wait_for 60 "demo Succeeded" state_is demo Succeeded
  for obj in pod/demo-0 pod/demo-3 configmap/demo-nccl service/demo serviceaccount/demo-nccl role/demo-nccl rolebinding/demo-nccl; do
    k get "$obj" >/dev/null 2>&1 && pass "$obj exists" || fail "$obj missing before delete"
  done
  k delete nj demo --wait=true --timeout=30s >/dev/null
  children() { k get pods,configmaps,services,serviceaccounts,roles,rolebindings -o name | grep -E '/demo(-|$)' || true; }
  wait_for 60 "deleting the job removes its pods, ConfigMap, Service and RBAC" sh -c "! '$kubectl' -n '$ns' get pods,configmaps,services,serviceaccounts,roles,rolebindings -o name | grep -qE '/demo(-|\$)'"
  left=$(children); [ -z "$left" ] || fail "left after delete: $left"
  "$helm" uninstall "$rel" -n "$ns" --wait --timeout 60s >/dev/null && pass "helm uninstall" || fail "helm uninstall"
  wait_for 60 "operator pod gone" is "" k get pods -o name
  # Everything namespaced that is left, minus what every namespace has and the events.
  left=$(k api-resources --verbs=list --namespaced -o name 2>/dev/null | grep -v '^events' | paste -sd, - \
         | xargs -I{} "$kubectl" -n "$ns" get {} -o name 2>/dev/null \
         | grep -v -e '^configmap/kube-root-ca.crt$' -e '^serviceaccount/default$' || true)
  check "after helm uninstall nothing of the release is left in the namespace (its Lease included)" "$left" ""
  # Other flow tests install releases of the same name in their own namespaces: helm marks
  # each object with its release's namespace.
  check "no cluster-scoped objects of the release" \
    "$("$kubectl" get clusterroles,clusterrolebindings -l "app.kubernetes.io/instance=$rel" \
        -o jsonpath='{range .items[*]}{.metadata.annotations.meta\.helm\.sh/release-namespace} {.metadata.name}{"\n"}{end}' \
      | awk -v ns="$ns" '$1 == ns')" ""
  "$kubectl" get crd nccljobs.nccl.dev >/dev/null && pass "the CRD stays" || fail "CRD gone"
}
