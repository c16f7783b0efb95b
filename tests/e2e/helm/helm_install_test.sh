#!/usr/bin/env bash
# helm install into the real local control plane creates the CRD, the RBAC and the Deployment;
# the operator's service account may do what the operator needs and nothing else (kubectl auth
# can-i, answered by the API server's RBAC authorizer); the examples pass the CRD's schema; and
# helm uninstall leaves nothing behind but the CRD. Two releases: cluster-wide and one namespace.
# No node runs here, so the Deployment is never ready: the test checks the objects, not the pods.
#
# Env (set by CTest): NCCLOP_TEST_KUBECONFIG, NCCLOP_TEST_HELM, NCCLOP_TEST_KUBECTL.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
chart="$root/charts/nccl-operator"
: "${NCCLOP_TEST_KUBECONFIG:?run through ctest (needs the controlplane fixture)}"
export KUBECONFIG=$NCCLOP_TEST_KUBECONFIG
helm=$NCCLOP_TEST_HELM
kubectl=$NCCLOP_TEST_KUBECTL
helm_env=(env HELM_CACHE_HOME="$(mktemp -d)" HELM_CONFIG_HOME="$(mktemp -d)" HELM_DATA_HOME="$(mktemp -d)")

suffix="$$-$RANDOM"
ns_a="helm-a-$suffix"      # release A: cluster-wide
ns_b="helm-b-$suffix"      # release B: the operator's namespace
ns_b_jobs="helm-bj-$suffix" # release B watches only this one
ns_other="helm-o-$suffix"  # nobody's
rel_a="ncclop-a-$suffix"
rel_b="ncclop-b-$suffix"

failures=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }
expect() {  # expect <description> <command...>: the command must succeed
  local what=$1; shift
  if "$@" >/tmp/helm-e2e-$$.out 2>&1; then pass "$what"; else fail "$what: $(cat /tmp/helm-e2e-$$.out)"; fi
}
expect_not() {  # expect_not <description> <command...>: the command must fail
  local what=$1; shift
  if "$@" >/tmp/helm-e2e-$$.out 2>&1; then fail "$what: unexpectedly succeeded: $(cat /tmp/helm-e2e-$$.out)"; else pass "$what"; fi
}
cleanup() {
  "${helm_env[@]}" "$helm" uninstall "$rel_a" -n "$ns_a" >/dev/null 2>&1 || true
  "${helm_env[@]}" "$helm" uninstall "$rel_b" -n "$ns_b" >/dev/null 2>&1 || true
  "${helm_env[@]}" "$helm" uninstall "${rel_u:-none}" -n "${ns_u:-none}" >/dev/null 2>&1 || true
  if [ -n "${crd_u:-}" ]; then "$kubectl" delete crd "$crd_u" --wait=false >/dev/null 2>&1 || true; fi
  if [ -n "${upgrade_dir:-}" ]; then rm -rf "$upgrade_dir"; fi
  "$kubectl" delete namespace "$ns_a" "$ns_b" "$ns_b_jobs" "$ns_other" "${ns_u:-helm-u-none}" --wait=false >/dev/null 2>&1 || true
  rm -f /tmp/helm-e2e-$$.out
}
trap cleanup EXIT

can() {  # can <namespace-of-sa> <release> <verb> <resource> [kubectl flags...]
  local sa_ns=$1 rel=$2; shift 2
  [ "$("$kubectl" auth can-i --as="system:serviceaccount:$sa_ns:$rel-nccl-operator" "$@" 2>/dev/null)" = yes ]
}
# Objects of a release still in the cluster (namespaced ones in the given namespaces, and
# cluster-scoped ones), by the chart's instance label.
leftovers() {  # leftovers <release> <namespace>...
  local rel=$1; shift
  local ns
  for ns in "$@"; do
    "$kubectl" get deployments,services,serviceaccounts,roles,rolebindings,configmaps,secrets \
      -n "$ns" -l "app.kubernetes.io/instance=$rel" -o name
    "$kubectl" get secrets -n "$ns" -l "owner=helm,name=$rel" -o name
  done
  "$kubectl" get clusterroles,clusterrolebindings,validatingadmissionpolicies,validatingadmissionpolicybindings \
    -l "app.kubernetes.io/instance=$rel" -o name
}

crd_existed=no
"$kubectl" get crd nccljobs.nccl.dev >/dev/null 2>&1 && crd_existed=yes

# ---- release A: cluster-wide ----------------------------------------------------------------
"$kubectl" create namespace "$ns_other" >/dev/null
# Release A leaves out the root-id admission policy: bound in every namespace, it would refuse
# the id annotations other tests write on the shared control plane meanwhile. Release B's copy,
# bound to its watched namespace, is checked below (and tests/integration/rbac proves the rule).
notes=$("${helm_env[@]}" "$helm" install "$rel_a" "$chart" -n "$ns_a" --create-namespace \
  --set rootIdPolicy.enabled=false)
echo "$notes" | grep -q "kind: NcclJob" \
  && pass "helm install A prints NOTES with a job to apply" || fail "NOTES lack the example job: $notes"
echo "$notes" | grep -q "deploy/" && fail "NOTES name a repository path a packaged chart's user lacks: $notes" \
  || pass "NOTES name no repository path"
# The job NOTES shows is one the CRD accepts.
expect "the NOTES job passes the CRD schema (server-side dry run)" sh -c \
  "printf '%s\n' \"\$1\" | sed -n '/^ *apiVersion: nccl.dev/,/^ *YAML\$/p' | sed '\$d; s/^     //' | '$kubectl' apply --dry-run=server -n '$ns_other' -f -" _ "$notes"
expect "CRD nccljobs.nccl.dev is established (existed before: $crd_existed)" \
  "$kubectl" wait --for=condition=Established crd/nccljobs.nccl.dev --timeout=60s
expect "A: Deployment, ServiceAccount, leader-election Role/RoleBinding, metrics Service" \
  "$kubectl" get -n "$ns_a" "deployment/$rel_a-nccl-operator" "serviceaccount/$rel_a-nccl-operator" \
    "role/$rel_a-nccl-operator-leader-election" "rolebinding/$rel_a-nccl-operator-leader-election" \
    "service/$rel_a-nccl-operator-metrics"
expect "A: ClusterRole and ClusterRoleBinding" \
  "$kubectl" get "clusterrole/$rel_a-nccl-operator" "clusterrolebinding/$rel_a-nccl-operator"
expect "A: the API server kept the Deployment's read-only, non-root container" \
  test "$("$kubectl" get -n "$ns_a" "deployment/$rel_a-nccl-operator" \
    -o jsonpath='{.spec.template.spec.securityContext.runAsNonRoot}/{.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem}')" = "true/true"

expect     "A: may create pods in any namespace"        can "$ns_a" "$rel_a" create pods -n "$ns_other"
expect     "A: may watch nccljobs in all namespaces"    can "$ns_a" "$rel_a" watch nccljobs.nccl.dev -A
expect     "A: may patch nccljobs/status"               can "$ns_a" "$rel_a" patch nccljobs.nccl.dev --subresource=status -n "$ns_other"
expect     "A: may create Roles (the per-job ones)"     can "$ns_a" "$rel_a" create roles.rbac.authorization.k8s.io -n "$ns_other"
expect     "A: may create its Lease"                    can "$ns_a" "$rel_a" create leases.coordination.k8s.io -n "$ns_a"
expect     "A: may renew its own Lease"                 can "$ns_a" "$rel_a" update leases.coordination.k8s.io/"$rel_a-nccl-operator-leader" -n "$ns_a"
expect_not "A: may not touch another Lease"             can "$ns_a" "$rel_a" update leases.coordination.k8s.io/kube-scheduler -n "$ns_a"
expect_not "A: may not create Leases elsewhere"         can "$ns_a" "$rel_a" create leases.coordination.k8s.io -n "$ns_other"
expect_not "A: may not read secrets"                    can "$ns_a" "$rel_a" get secrets -n "$ns_other"
expect_not "A: may not delete nodes"                    can "$ns_a" "$rel_a" delete nodes
expect_not "A: may not create ClusterRoles"             can "$ns_a" "$rel_a" create clusterroles.rbac.authorization.k8s.io
expect_not "A: may not escalate Roles"                  can "$ns_a" "$rel_a" escalate roles.rbac.authorization.k8s.io -n "$ns_other"
expect     "A: may delete NcclJobs (ttlSecondsAfterFinished)" can "$ns_a" "$rel_a" delete nccljobs.nccl.dev -n "$ns_other"
expect     "A: may create gang scheduling Workloads"   can "$ns_a" "$rel_a" create workloads.scheduling.k8s.io -n "$ns_other"
# PodGroups exist from Kubernetes 1.36 (kubectl asks only about resources the server serves).
if "$kubectl" api-resources --api-group=scheduling.k8s.io -o name 2>/dev/null | grep -q '^podgroups\.'; then
  expect   "A: may delete gang scheduling PodGroups"   can "$ns_a" "$rel_a" delete podgroups.scheduling.k8s.io -n "$ns_other"
fi
expect_not "A: may not create NcclJobs"                 can "$ns_a" "$rel_a" create nccljobs.nccl.dev -n "$ns_other"
expect_not "A: may not exec into pods"                  can "$ns_a" "$rel_a" create pods --subresource=exec -n "$ns_other"

# People: a user with the built-in edit role in a namespace may run NcclJobs there, one with view
# may read them; no RBAC written for NcclJobs (the chart's ClusterRoles are aggregated into the
# built-in ones by kube-controller-manager, within seconds).
"$kubectl" create rolebinding editor --clusterrole=edit --user=alice -n "$ns_other" >/dev/null
"$kubectl" create rolebinding viewer --clusterrole=view --user=bob -n "$ns_other" >/dev/null
person_can() { [ "$("$kubectl" auth can-i --as="$1" "${@:2}" -n "$ns_other" 2>/dev/null)" = yes ]; }
aggregated() { person_can alice create nccljobs.nccl.dev && person_can bob list nccljobs.nccl.dev; }
for _ in $(seq 1 100); do aggregated && break; sleep 0.2; done
expect     "edit in a namespace may create NcclJobs there"   person_can alice create nccljobs.nccl.dev
expect     "edit may delete them"                            person_can alice delete nccljobs.nccl.dev
expect     "view may read them"                              person_can bob get nccljobs.nccl.dev
expect_not "view may not create them"                        person_can bob create nccljobs.nccl.dev
expect_not "edit may not write their status"                 person_can alice update nccljobs.nccl.dev --subresource=status

expect "examples pass the CRD schema (server-side dry run)" \
  "$kubectl" apply --dry-run=server -n "$ns_other" -f "$root/deploy/examples/"
expect_not "the CRD schema rejects replicas: 0" sh -c \
  "sed 's/replicas: 4/replicas: 0/' '$root/deploy/examples/ncclJob.yaml' | '$kubectl' apply --dry-run=server -n '$ns_other' -f -"

# ---- release B: one namespace ----------------------------------------------------------------
"$kubectl" create namespace "$ns_b_jobs" >/dev/null
"${helm_env[@]}" "$helm" install "$rel_b" "$chart" -n "$ns_b" --create-namespace \
  --set watchNamespace="$ns_b_jobs" >/dev/null
expect "B: Role and RoleBinding in the watched namespace" \
  "$kubectl" get -n "$ns_b_jobs" "role/$rel_b-nccl-operator" "rolebinding/$rel_b-nccl-operator"
expect_not "B: no ClusterRole" "$kubectl" get "clusterrole/$rel_b-nccl-operator"
expect     "B: may create pods in the watched namespace"  can "$ns_b" "$rel_b" create pods -n "$ns_b_jobs"
expect     "B: may watch nccljobs in the watched namespace" can "$ns_b" "$rel_b" watch nccljobs.nccl.dev -n "$ns_b_jobs"
expect_not "B: may not create pods elsewhere"             can "$ns_b" "$rel_b" create pods -n "$ns_other"
expect_not "B: may not list nccljobs cluster-wide"        can "$ns_b" "$rel_b" list nccljobs.nccl.dev -A
expect_not "B: may not read secrets in the watched namespace" can "$ns_b" "$rel_b" get secrets -n "$ns_b_jobs"
expect     "B: may create its Lease in its own namespace" can "$ns_b" "$rel_b" create leases.coordination.k8s.io -n "$ns_b"
expect "B: the API server took the root-id admission policy, bound to the watched namespace" \
  test "$("$kubectl" get "validatingadmissionpolicybinding/$rel_b-nccl-operator-$ns_b-root-id" \
    -o jsonpath='{.spec.policyName}/{.spec.matchResources.namespaceSelector.matchLabels.kubernetes\.io/metadata\.name}')" \
    = "$rel_b-nccl-operator-$ns_b-root-id/$ns_b_jobs"

# ---- CRD upgrade: the documented path (charts/nccl-operator/README.md "Upgrade") -------------------
# On copies of the chart whose CRD has names and a group of its own (no short name), so the
# shared CRD other tests use is never touched and `kubectl get nj` stays unambiguous: "old"
# lacks spec.activeDeadlineSeconds, "new" has the chart's schema as it is.
rel_u="ncclop-u-$suffix"; ns_u="helm-u-$suffix"; group="u$suffix.upgrade.test"
crd_u="upgradejobs.$group"
upgrade_dir=$(mktemp -d)
for version in old new; do
  cp -r "$chart" "$upgrade_dir/$version"
  python3 - "$upgrade_dir/$version/crds/nccl.dev_nccljobs.yaml" "$group" "$version" <<'PY'
import sys, yaml
path, group, version = sys.argv[1:]
crd = yaml.safe_load(open(path))
crd["metadata"]["name"] = "upgradejobs." + group
crd["spec"]["group"] = group
crd["spec"]["names"] = {"plural": "upgradejobs", "singular": "upgradejob", "kind": "UpgradeJob", "listKind": "UpgradeJobList"}
if version == "old":
    del crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["activeDeadlineSeconds"]
yaml.safe_dump(crd, open(path, "w"), sort_keys=False)
PY
done
served_field() {
  "$kubectl" get crd "$crd_u" -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.activeDeadlineSeconds.type}'
}
"${helm_env[@]}" "$helm" install "$rel_u" "$upgrade_dir/old" -n "$ns_u" --create-namespace --set rbac.create=false \
  --set serviceAccount.create=false --set serviceAccount.name=default --set leaderElection.enabled=false \
  --set rootIdPolicy.enabled=false >/dev/null
"$kubectl" wait --for=condition=Established "crd/$crd_u" --timeout=60s >/dev/null
expect "old chart: its CRD lacks activeDeadlineSeconds" test -z "$(served_field)"
"${helm_env[@]}" "$helm" upgrade "$rel_u" "$upgrade_dir/new" -n "$ns_u" --reuse-values >/dev/null
expect "helm upgrade alone leaves the old CRD (why the README asks for the step below)" test -z "$(served_field)"
"${helm_env[@]}" "$helm" show crds "$upgrade_dir/new" | "$kubectl" apply --server-side --force-conflicts -f - >/dev/null
expect "helm show crds | kubectl apply --server-side --force-conflicts: the new field is served" \
  test "$(served_field)" = integer
"${helm_env[@]}" "$helm" uninstall "$rel_u" -n "$ns_u" --wait --timeout 120s >/dev/null
"$kubectl" delete crd "$crd_u" --wait=false >/dev/null
"$kubectl" delete namespace "$ns_u" --wait=false >/dev/null
rm -rf "$upgrade_dir"

# ---- uninstall: only the CRD stays -------------------------------------------------------------
"${helm_env[@]}" "$helm" uninstall "$rel_a" -n "$ns_a" --wait --timeout 120s >/dev/null
"${helm_env[@]}" "$helm" uninstall "$rel_b" -n "$ns_b" --wait --timeout 120s >/dev/null
left=$(leftovers "$rel_a" "$ns_a"; leftovers "$rel_b" "$ns_b" "$ns_b_jobs")
[ -z "$left" ] && pass "helm uninstall leaves no object of either release" || fail "left after uninstall: $left"
expect "helm uninstall keeps the CRD (and with it every NcclJob)" "$kubectl" get crd nccljobs.nccl.dev

if [ "$failures" -gt 0 ]; then echo "$failures check(s) failed" >&2; exit 1; fi
echo "all checks passed"
