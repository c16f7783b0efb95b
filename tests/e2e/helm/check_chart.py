#!/usr/bin/env python3
"""Renders charts/nccl-operator with `helm template` under several values and asserts what the
rendered objects must hold: which kinds exist, least-privilege rules, a non-root read-only
operator container with probes, that each value reaches the operator's flags, the names
(nameOverride, fullnameOverride), the PodDisruptionBudget, the `helm test` pod, Chart.yaml's
metadata and the chart README's RBAC table against the rules the templates grant.

  check_chart.py            (helm from $NCCLOP_TEST_HELM, else tests/harness/controlplane/build.sh)
"""
import os
import re
import subprocess
import sys
from pathlib import Path

try:
    import yaml
except ImportError:
    sys.exit("check_chart.py needs PyYAML: apt-get install python3-yaml (or pip install pyyaml)")

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "charts" / "nccl-operator"
APP_VERSION = str(yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"])
RELEASE_NS = "nccl-system"
KUBE_VERSION = "1.35.0"

# What the operator does in the API (docs/contracts.md, operator RBAC); nothing more.
OPERATOR_RULES = {
    ("nccl.dev", "nccljobs"): {"get", "list", "watch", "update", "patch", "delete"},  # delete: TTL
    ("nccl.dev", "nccljobs/status"): {"update", "patch"},
    ("nccl.dev", "nccljobs/finalizers"): {"update"},
    ("", "pods"): {"get", "list", "watch", "create", "delete", "patch"},
    ("", "configmaps"): {"get", "list", "watch", "create", "update", "patch", "delete"},
    ("", "services"): {"get", "list", "watch", "create", "update", "patch", "delete"},
    ("", "serviceaccounts"): {"get", "list", "watch", "create", "update", "patch", "delete"},
    ("rbac.authorization.k8s.io", "roles"): {"get", "list", "watch", "create", "update", "patch", "delete"},
    ("rbac.authorization.k8s.io", "rolebindings"): {"get", "list", "watch", "create", "update", "patch", "delete"},
    ("", "events"): {"create", "patch"},
    ("events.k8s.io", "events"): {"create", "patch"},
    ("kueue.x-k8s.io", "workloads"): {"get", "list", "watch", "create", "patch"},  # Kueue admission; patch: suspend
    ("kueue.x-k8s.io", "workloads/status"): {"patch"},  # Finished at the job's end
    ("scheduling.k8s.io", "workloads"): {"get", "list", "watch", "create", "patch", "delete"},  # native gang scheduling
    ("scheduling.k8s.io", "podgroups"): {"get", "list", "watch", "create", "patch", "delete"},  # 1.36+: one per attempt
    ("resource.nvidia.com", "computedomains"): {"get", "list", "watch", "create", "patch"},  # spec.computeDomain
}
# Cluster-scoped reads: the ResourceFlavors Kueue admits a job with (their nodeLabels and tolerations),
# the priority classes its Workload's priority comes from (list: the globalDefault PriorityClass), the
# nodes (restartStrategy Auto: whether every node declares the kubelet's restart in place).
CLUSTER_READ_RULES = {("kueue.x-k8s.io", "resourceflavors"): {"get"},
                      ("kueue.x-k8s.io", "workloadpriorityclasses"): {"get"},
                      ("scheduling.k8s.io", "priorityclasses"): {"get", "list"},
                      ("", "nodes"): {"list", "watch"}}
# With metrics.secure.enabled: the reviews of who asks for /metrics (cluster-scoped creates).
SECURE_METRICS_RULES = {("authentication.k8s.io", "tokenreviews"): {"create"},
                        ("authorization.k8s.io", "subjectaccessreviews"): {"create"}}
# The per-job Role the operator creates; it may only grant what the operator holds.
JOB_ROLE_RULES = {("", "configmaps"): {"get", "list", "watch"}, ("", "pods"): {"get", "patch"}}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def helm_binary():
    if os.environ.get("NCCLOP_TEST_HELM"):
        return os.environ["NCCLOP_TEST_HELM"]
    out = subprocess.run([str(ROOT / "tests/harness/controlplane/build.sh")], check=True,
                         capture_output=True, text=True).stdout
    return str(Path(out.strip().splitlines()[-1]) / "helm")


HELM = helm_binary()


def helm(*args, expect_ok=True):
    done = subprocess.run([HELM, *args], capture_output=True, text=True)
    if expect_ok and done.returncode != 0:
        sys.exit(f"helm {' '.join(args)} failed:\n{done.stderr}")
    return done


def render(*sets, expect_ok=True, kube_version=KUBE_VERSION, tests=False, release="nccl-operator"):
    """The chart's objects; with tests, the `helm test` hooks too (test_helm_test)."""
    args = ["template", release, str(CHART), "--namespace", RELEASE_NS]
    if kube_version:
        args += ["--kube-version", kube_version]
    if not tests:
        args.append("--skip-tests")
    for s in sets:
        args += ["--set", s]
    done = helm(*args, expect_ok=expect_ok)
    if not expect_ok:
        return done
    return [d for d in yaml.safe_load_all(done.stdout) if d]


AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"


def user_role(o):
    """A ClusterRole the chart adds to the built-in admin/edit/view roles (not the operator's)."""
    return o["kind"] == "ClusterRole" and any(k.startswith(AGGREGATE) for k in o["metadata"].get("labels", {}))


def of_kind(objs, kind):
    return [o for o in objs if o["kind"] == kind and not user_role(o)]


def one(objs, kind, where):
    found = of_kind(objs, kind)
    check(len(found) == 1, f"{where}: want one {kind}, got {len(found)}")
    return found[0] if found else None


def rules_map(rules):
    got = {}
    for rule in rules:
        check("resourceNames" not in rule or rule["resourceNames"], "empty resourceNames")
        for group in rule.get("apiGroups", []):
            for resource in rule.get("resources", []):
                got.setdefault((group, resource), set()).update(rule.get("verbs", []))
    return got


def check_operator_rules(rules, where, also=None):
    got = rules_map(rules)
    for key in also or {}:
        check(got.pop(key, None) == also[key], f"{where}: {key} must grant exactly {sorted(also[key])}")
    check(got == OPERATOR_RULES, f"{where}: operator rules differ from the contract:\n"
          f"  extra:   {sorted((k, sorted(v - OPERATOR_RULES.get(k, set()))) for k, v in got.items() if v - OPERATOR_RULES.get(k, set()))}\n"
          f"  missing: {sorted((k, sorted(v - got.get(k, set()))) for k, v in OPERATOR_RULES.items() if v - got.get(k, set()))}")
    for key, verbs in got.items():
        check("*" not in verbs and "*" not in key, f"{where}: wildcard in {key}: {verbs}")
        check(key[1] != "secrets", f"{where}: the operator must not touch secrets")
        check(not verbs & {"escalate", "bind", "impersonate"}, f"{where}: {key} grants {verbs}")
    for key, verbs in JOB_ROLE_RULES.items():
        check(verbs <= got.get(key, set()),
              f"{where}: the operator cannot create a job Role granting {key} {verbs} without holding it")


def operator_container(deployment):
    containers = deployment["spec"]["template"]["spec"]["containers"]
    check(len(containers) == 1, f"want one container in the Deployment, got {len(containers)}")
    return containers[0]


def check_deployment(deployment, where):
    pod = deployment["spec"]["template"]["spec"]
    c = operator_container(deployment)
    psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True, f"{where}: pod runAsNonRoot")
    check(psc.get("runAsUser", 0) != 0, f"{where}: pod runAsUser must not be 0")
    check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{where}: seccomp RuntimeDefault")
    check(csc.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem")
    check(csc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation false")
    check(csc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities drop ALL")
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        http = c.get(probe, {}).get("httpGet", {})
        check(http.get("path") == path, f"{where}: {probe} path {http.get('path')} != {path}")
        check(http.get("port") == "health" and ports.get("health") == 8081,
              f"{where}: {probe} must hit the health port 8081")
    check(c.get("resources", {}).get("requests"), f"{where}: resource requests")
    check(c.get("resources", {}).get("limits", {}).get("memory"), f"{where}: memory limit")
    check(c["image"] == f"nccl-operator:{APP_VERSION}", f"{where}: image {c['image']}")
    check(pod["serviceAccountName"] == "nccl-operator", f"{where}: serviceAccountName")
    return c["args"]


def check_subject(binding, where):
    subjects = binding["subjects"]
    check(subjects == [{"kind": "ServiceAccount", "name": "nccl-operator", "namespace": RELEASE_NS}],
          f"{where}: {binding['kind']} subjects {subjects}")


def test_defaults():
    where = "defaults"
    objs = render()
    kinds = sorted(o["kind"] for o in objs if not user_role(o))
    check(kinds == sorted(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                           "Service", "Deployment", "Lease", "NetworkPolicy"] + ROOT_ID_POLICY_KINDS), f"{where}: kinds {kinds}")
    lease = one(objs, "Lease", where)
    check(lease["metadata"]["name"] == "nccl-operator-leader",
          f"{where}: the chart's Lease must be the one the operator elects on: {lease['metadata']['name']}")
    check(operator_container(one(objs, "Deployment", where)).get("command") == ["nccl-operator"],
          f"{where}: the operator container names its command")
    for o in objs:
        check(o["metadata"].get("labels", {}).get("app.kubernetes.io/part-of") == "nccl-operator",
              f"{where}: {o['kind']} lacks app.kubernetes.io/part-of")
        if o["kind"] not in ["ClusterRole", "ClusterRoleBinding"] + ROOT_ID_POLICY_KINDS:
            check(o["metadata"].get("namespace") == RELEASE_NS, f"{where}: {o['kind']} namespace")
    check_operator_rules(one(objs, "ClusterRole", where)["rules"], where, also=CLUSTER_READ_RULES)
    crb = one(objs, "ClusterRoleBinding", where)
    check(crb["roleRef"]["kind"] == "ClusterRole", f"{where}: ClusterRoleBinding roleRef")
    check_subject(crb, where)
    lease_rules = sorted((r["apiGroups"], r["resources"], sorted(r["verbs"]), r.get("resourceNames"))
                         for r in one(objs, "Role", where)["rules"])
    check(lease_rules == [(["coordination.k8s.io"], ["leases"], ["create"], None),
                          (["coordination.k8s.io"], ["leases"], ["get", "update"], ["nccl-operator-leader"])],
          f"{where}: the leader-election Role may only create leases and get/update its own: {lease_rules}")
    check_subject(one(objs, "RoleBinding", where), where)
    args = check_deployment(one(objs, "Deployment", where), where)
    for flag in ("--namespace=", "--leader-elect", "--leader-election-id=nccl-operator-leader", "--metrics-bind-address=:8080",
                 "--health-probe-bind-address=:8081", f"--sidecar-image=nccl-sidecar:{APP_VERSION}",
                 "--log-format=json", "--log-level=info", "--concurrency=4"):
        check(flag in args, f"{where}: flag {flag} missing from {args}")
    service = one(objs, "Service", where)
    check(service["spec"]["ports"][0]["targetPort"] == "metrics", f"{where}: metrics Service port")
    binding = check_root_id_policy(objs, where)
    check(binding and "namespaceSelector" not in binding["spec"]["matchResources"],
          f"{where}: the root-id policy binds in every namespace")


ROOT_ID_POLICY_KINDS = ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]

EDIT_RULES = {("nccl.dev", "nccljobs"): {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
              ("nccl.dev", "nccljobs/status"): {"get", "list", "watch"}}
VIEW_RULES = {("nccl.dev", "nccljobs"): {"get", "list", "watch"}, ("nccl.dev", "nccljobs/status"): {"get", "list", "watch"}}


def test_user_roles():
    """NcclJobs join the built-in admin/edit and view roles, with only NcclJob rights; off with
    rbac.aggregateToDefaultRoles=false."""
    where = "user roles"
    roles = [o for o in render() if user_role(o)]
    by_labels = {tuple(sorted(k for k in r["metadata"]["labels"] if k.startswith(AGGREGATE))): r for r in roles}
    check(sorted(by_labels) == [(AGGREGATE + "admin", AGGREGATE + "edit"), (AGGREGATE + "view",)],
          f"{where}: want one role aggregated to admin and edit and one to view, got {sorted(by_labels)}")
    edit = by_labels.get((AGGREGATE + "admin", AGGREGATE + "edit"))
    view = by_labels.get((AGGREGATE + "view",))
    check(edit and rules_map(edit["rules"]) == EDIT_RULES, f"{where}: edit rules {edit and rules_map(edit['rules'])}")
    check(view and rules_map(view["rules"]) == VIEW_RULES, f"{where}: view rules {view and rules_map(view['rules'])}")
    for r in roles:
        values = {v for k, v in r["metadata"]["labels"].items() if k.startswith(AGGREGATE)}
        check(values == {"true"}, f"{where}: aggregation labels must be \"true\": {values}")
    check(not [o for o in render("rbac.aggregateToDefaultRoles=false") if user_role(o)],
          f"{where}: rbac.aggregateToDefaultRoles=false must leave the built-in roles alone")


def check_root_id_policy(objs, where):
    """Only the root pod itself may change its id annotations (tests/integration/rbac proves the
    rule with real tokens); here: the policy denies, fails closed, and its binding names it."""
    policy = one(objs, "ValidatingAdmissionPolicy", where)
    binding = one(objs, "ValidatingAdmissionPolicyBinding", where)
    if not policy or not binding:
        return None
    spec = policy["spec"]
    check(spec["failurePolicy"] == "Fail", f"{where}: the root-id policy must fail closed")
    rules = spec["matchConstraints"]["resourceRules"]
    check(rules == [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["pods"]}],
          f"{where}: the root-id policy must match pod updates: {rules}")
    check("authentication.kubernetes.io/pod-name" in str(spec["variables"]) and
          "nccl.dev/unique-id" in str(spec["matchConditions"]), f"{where}: the root-id policy's rule")
    check(binding["spec"]["policyName"] == policy["metadata"]["name"] and
          binding["spec"]["validationActions"] == ["Deny"], f"{where}: the binding must deny with the policy")
    check(binding["spec"]["matchResources"]["objectSelector"] ==
          {"matchExpressions": [{"key": "nccl.dev/job-name", "operator": "Exists"}]},
          f"{where}: the binding selects the operator's pods")
    return binding


def test_one_namespace():
    where = "watchNamespace=ml"
    objs = render("watchNamespace=ml")
    # Cluster-wide only the reads of cluster-scoped objects (CLUSTER_READ_RULES), nothing else.
    cluster_role = one(objs, "ClusterRole", where)
    check(cluster_role and rules_map(cluster_role["rules"]) == CLUSTER_READ_RULES,
          f"{where}: the only cluster-wide RBAC when one namespace is watched reads ResourceFlavors, priority classes and nodes")
    cluster_binding = one(objs, "ClusterRoleBinding", where)
    check(cluster_binding and cluster_role and cluster_binding["roleRef"]["name"] == cluster_role["metadata"]["name"],
          f"{where}: the ClusterRoleBinding binds the ResourceFlavors reader")
    if cluster_binding:
        check_subject(cluster_binding, where)
    roles = {r["metadata"]["namespace"]: r for r in of_kind(objs, "Role")}
    check(set(roles) == {"ml", RELEASE_NS}, f"{where}: Roles in {sorted(roles)}")
    if "ml" in roles:
        check_operator_rules(roles["ml"]["rules"], where)
    bindings = {b["metadata"]["namespace"]: b for b in of_kind(objs, "RoleBinding")}
    check(set(bindings) == {"ml", RELEASE_NS}, f"{where}: RoleBindings in {sorted(bindings)}")
    for b in bindings.values():
        check(b["roleRef"]["kind"] == "Role", f"{where}: roleRef kind")
        check_subject(b, where)
    args = check_deployment(one(objs, "Deployment", where), where)
    check("--namespace=ml" in args, f"{where}: --namespace=ml missing from {args}")
    binding = check_root_id_policy(objs, where)
    check(binding and binding["spec"]["matchResources"].get("namespaceSelector") ==
          {"matchLabels": {"kubernetes.io/metadata.name": "ml"}},
          f"{where}: the root-id policy binds in the watched namespace only")


def test_switches():
    objs = render("leaderElection.enabled=false")
    args = operator_container(one(objs, "Deployment", "no leader election"))["args"]
    check("--leader-elect" not in args, "leaderElection.enabled=false still passes --leader-elect")
    check(not of_kind(objs, "Role"), "leaderElection.enabled=false still grants leases")
    check(not of_kind(objs, "Lease"), "leaderElection.enabled=false still makes a Lease")
    check(one(objs, "Deployment", "")["spec"]["strategy"]["type"] == "Recreate",
          "without leader election two operators must never overlap (Recreate)")

    objs = render("metrics.enabled=false")
    check(not of_kind(objs, "Service"), "metrics.enabled=false still renders the metrics Service")
    c = operator_container(one(objs, "Deployment", "no metrics"))
    check("metrics" not in {p["name"] for p in c["ports"]}, "metrics.enabled=false still declares the port")
    check("--metrics-bind-address=0" in c["args"], "metrics.enabled=false must turn the endpoint off")

    objs = render("log.format=text", "log.level=debug", "concurrency=9", "sidecarImage.repository=r/side",
                  "sidecarImage.tag=1.2", "image.tag=7.7", "extraArgs={--foo=bar}")
    c = operator_container(one(objs, "Deployment", "flags"))
    for flag in ("--log-format=text", "--log-level=debug", "--concurrency=9", "--sidecar-image=r/side:1.2",
                 "--foo=bar"):
        check(flag in c["args"], f"value did not reach flag {flag}: {c['args']}")
    check(c["image"] == "nccl-operator:7.7", f"image.tag ignored: {c['image']}")

    objs = render("rbac.create=false", "serviceAccount.create=false", "serviceAccount.name=mine")
    kinds = sorted(o["kind"] for o in objs)
    check(kinds == sorted(["Deployment", "Lease", "NetworkPolicy", "Service"] + ROOT_ID_POLICY_KINDS),
          f"rbac.create=false, serviceAccount.create=false: kinds {kinds}")
    kinds = sorted(o["kind"] for o in render("rootIdPolicy.enabled=false"))
    check(not set(ROOT_ID_POLICY_KINDS) & set(kinds), f"rootIdPolicy.enabled=false still renders the policy: {kinds}")
    check(one(objs, "Deployment", "")["spec"]["template"]["spec"]["serviceAccountName"] == "mine",
          "serviceAccount.name ignored")

    for bad in ("log.format=xml", "concurrency=0", "watchNamespace=Not_A_Namespace", "metrics.port=70000"):
        done = render(bad, expect_ok=False)
        check(done.returncode != 0 and "values don't meet the specifications of the schema" in done.stderr,
              f"values.schema.json must reject {bad}: {done.stderr.strip()}")

    done = render("serviceAccount.create=false", expect_ok=False)
    check(done.returncode != 0 and "serviceAccount.name is required" in done.stderr,
          "serviceAccount.create=false without a name must fail with a message")


def test_sidecar_values():
    args = operator_container(one(render(), "Deployment", "sidecar defaults"))["args"]
    for flag in ("--sidecar-cpu-request=10m", "--sidecar-memory-request=32Mi", "--sidecar-cpu-limit=500m",
                 "--sidecar-memory-limit=64Mi", "--sidecar-ephemeral-storage-request=16Mi",
                 "--sidecar-ephemeral-storage-limit=128Mi", "--sidecar-image-pull-policy=IfNotPresent"):
        check(flag in args, f"sidecar defaults: flag {flag} missing from {args}")
    args = operator_container(one(render("sidecarImage.pullPolicy=Always", "sidecarResources.limits.cpu=",
                                         "sidecarResources.requests.memory=48Mi"), "Deployment", "sidecar"))["args"]
    check(flag_values(args, "sidecar-image-pull-policy") == ["Always"], f"sidecarImage.pullPolicy: {args}")
    check(flag_values(args, "sidecar-cpu-limit") == [""], f"an empty limit leaves it unset: {args}")
    check(flag_values(args, "sidecar-memory-request") == ["48Mi"], f"sidecarResources.requests.memory: {args}")
    args = operator_container(one(render("extraArgs={--sidecar-memory-limit=1Gi}"), "Deployment", "x"))["args"]
    check(flag_values(args, "sidecar-memory-limit") == ["1Gi"], f"extraArgs replaces --sidecar-memory-limit: {args}")
    for bad in ("sidecarResources.limits.cpu=lots", "sidecarImage.pullPolicy=sometimes", "sidecarResources.limit.cpu=1"):
        done = render(bad, expect_ok=False)
        check(done.returncode != 0, f"values.schema.json must reject {bad}")


def test_gpu_resource_name():
    args = operator_container(one(render(), "Deployment", "gpu default"))["args"]
    check(flag_values(args, "gpu-resource-name") == ["nvidia.com/gpu"], f"gpuResourceName default: {args}")
    for name in ("amd.com/gpu", "nvidia.com/mig-1g.10gb"):
        args = operator_container(one(render(f"gpuResourceName={name}"), "Deployment", name))["args"]
        check(flag_values(args, "gpu-resource-name") == [name], f"gpuResourceName={name}: {args}")
    args = operator_container(one(render("extraArgs={--gpu-resource-name=amd.com/gpu}"), "Deployment", "x"))["args"]
    check(flag_values(args, "gpu-resource-name") == ["amd.com/gpu"], f"extraArgs replaces --gpu-resource-name: {args}")
    # What the operator refuses (operator/src/flags.cc), refused before it starts.
    for bad in ("gpu", "kubernetes.io/gpu", "example.kubernetes.io/gpu", "requests.nvidia.com/gpu", "nvidia.com/",
                "Nvidia.com/gpu", "nvidia.com/a/b"):
        done = render(f"gpuResourceName={bad}", expect_ok=False)
        check(done.returncode != 0 and "gpuResourceName" in done.stderr,
              f"values.schema.json must reject gpuResourceName={bad}: {done.stderr.strip()[:300]}")


def test_operations_values():
    objs = render("global.imageRegistry=reg.example", "global.anything.nested=1")
    check(one(objs, "Deployment", "global") is not None, "a parent chart's global values must be accepted")
    check(not of_kind(objs, "ServiceMonitor"), "no ServiceMonitor by default")
    objs = render("metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prom",
                  "metrics.serviceMonitor.interval=15s")
    monitor = one(objs, "ServiceMonitor", "serviceMonitor")
    service = one(objs, "Service", "serviceMonitor")
    if monitor and service:
        check(monitor["apiVersion"] == "monitoring.coreos.com/v1", f"ServiceMonitor apiVersion {monitor['apiVersion']}")
        check(monitor["metadata"]["labels"].get("release") == "prom", "serviceMonitor.labels")
        selected = monitor["spec"]["selector"]["matchLabels"]
        check(all(service["metadata"]["labels"].get(k) == v for k, v in selected.items()),
              f"the ServiceMonitor selects the metrics Service: {selected}")
        endpoint = monitor["spec"]["endpoints"][0]
        check(endpoint["port"] == service["spec"]["ports"][0]["name"] and endpoint["interval"] == "15s",
              f"ServiceMonitor endpoint {endpoint}")
    done = render("metrics.serviceMonitor.enabled=true", "metrics.service.enabled=false", expect_ok=False)
    check(done.returncode != 0 and "metrics.service.enabled=true" in done.stderr,
          f"a ServiceMonitor without the Service it selects must be refused: {done.stderr.strip()}")
    policy = one(render(), "NetworkPolicy", "networkPolicy")
    if policy:
        ports = sorted(p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"])
        check(ports == [8080, 8081], f"the operator's NetworkPolicy opens only metrics and health: {ports}")
    check(not of_kind(render("networkPolicy.enabled=false"), "NetworkPolicy"), "networkPolicy.enabled=false")
    notes = (CHART / "templates" / "NOTES.txt").read_text()
    check("deploy/" not in notes, "NOTES.txt must not name repository paths a packaged chart's user lacks")


def test_replicas_need_leader_election():
    done = render("replicaCount=2", "leaderElection.enabled=false", expect_ok=False)
    check(done.returncode != 0 and "leaderElection.enabled=true" in done.stderr and "replicaCount=2" in done.stderr,
          f"replicaCount=2 without leader election must be refused, naming the fix: rc {done.returncode} {done.stderr.strip()}")
    for sets, replicas in ((["replicaCount=2"], 2), (["replicaCount=1", "leaderElection.enabled=false"], 1),
                           (["replicaCount=0", "leaderElection.enabled=false"], 0)):
        deployment = one(render(*sets), "Deployment", " ".join(sets))
        check(deployment and deployment["spec"]["replicas"] == replicas, f"{sets}: replicas != {replicas}")


def test_misspelt_values_are_refused():
    for typo in ("logLevel=debug", "concurency=8"):
        done = render(typo, expect_ok=False)
        key = typo.split("=")[0]
        check(done.returncode != 0 and key in done.stderr,
              f"--set {typo} must be refused naming {key}, not silently ignored: rc {done.returncode} {done.stderr.strip()[:300]}")
    # Every key of values.yaml is in the schema, so the defaults and the documented keys still render.
    for ok in ("log.level=debug", "concurrency=8", "priorityClassName=high", "nodeSelector.zone=a"):
        done = render(ok, expect_ok=False)
        check(done.returncode == 0, f"--set {ok} must render: {done.stderr.strip()[:300]}")


def flag_values(args, name):
    return [a.split("=", 1)[1] if "=" in a else None for a in args
            if a == f"--{name}" or a.startswith(f"--{name}=")]


def test_extra_args():
    # A flag the chart sets from a value: extraArgs replaces it; the operator sees it once.
    for name, value in (("log-level", "debug"), ("log-format", "text"), ("concurrency", "7"),
                        ("sidecar-image", "reg/side:9")):
        c = operator_container(one(render(f"extraArgs={{--{name}={value}}}"), "Deployment", name))
        check(flag_values(c["args"], name) == [value], f"extraArgs --{name}={value}: the operator gets {flag_values(c['args'], name)}")
        check(len(flag_values(c["args"], "namespace")) == 1, f"extraArgs --{name} dropped another flag: {c['args']}")
    c = operator_container(one(render("extraArgs={--log-level=warn,--concurrency=2}"), "Deployment", "two"))
    check(flag_values(c["args"], "log-level") == ["warn"] and flag_values(c["args"], "concurrency") == ["2"]
          and flag_values(c["args"], "log-format") == ["json"], f"two extraArgs: {c['args']}")
    # A flag the chart wires into RBAC, the Lease, ports or probes: refused, naming the value.
    for flag, value in (("--namespace=ml", "watchNamespace"), ("--leader-elect=false", "leaderElection.enabled"),
                        ("--leader-election-id=x", "leaderElection.enabled"),
                        ("--leader-election-namespace=x", "leaderElection.enabled"),
                        ("--metrics-bind-address=:9", "metrics.port"), ("--health-probe-bind-address=:9", "healthProbePort")):
        done = render(f"extraArgs={{{flag}}}", expect_ok=False)
        check(done.returncode != 0 and value in done.stderr,
              f"extraArgs {flag} must be refused naming {value}: rc {done.returncode} {done.stderr.strip()}")


def operator_flag_names():
    """The operator's flags, from operator/REFERENCE.md's table (made from operator/src/flags.cc; the
    unit test operator.FlagsDoc.* fails when the two differ)."""
    doc = (ROOT / "operator" / "REFERENCE.md").read_text()
    block = re.search(r"<!-- begin generated flags\b.*?-->\n(.*?)<!-- end generated flags -->", doc, re.S)
    if not check(block is not None, "operator/REFERENCE.md has no generated flags table"):
        return set()
    return set(re.findall(r"^\| `--([a-z0-9-]+)", block.group(1), re.M))


def test_every_flag_the_chart_passes_exists():
    known = operator_flag_names()
    check(len(known) > 10, f"too few operator flags read from operator/REFERENCE.md: {sorted(known)}")
    for sets in ((), ("metrics.enabled=false", "leaderElection.enabled=false", "watchNamespace=ml"),
                 ("extraArgs={--log-level=warn}",)):
        for arg in operator_container(one(render(*sets), "Deployment", f"flags {sets}"))["args"]:
            name = arg[2:].split("=", 1)[0] if arg.startswith("--") else None
            check(name in known, f"the chart ({sets}) passes {arg!r}: not a flag of nccl-operator (operator/REFERENCE.md)")
    # The flags the templates name without the dashes: those an extraArg replaces (hasKey $extra
    # "name") and those it may not set (the $wired dict's keys).
    templates = (CHART / "templates" / "_helpers.tpl").read_text() + (CHART / "templates" / "deployment.yaml").read_text()
    named = set(re.findall(r'hasKey \$extra "([a-z0-9-]+)"', templates))
    wired = re.search(r"\$wired := dict (.*?) }}", templates)
    if check(wired is not None, "charts/nccl-operator/templates/_helpers.tpl: no $wired dict of refused flags"):
        named |= set(re.findall(r'"([^"]*)"', wired.group(1))[0::2])
    check(len(named) > 5, f"too few flag names read from the templates: {sorted(named)}")
    for name in sorted(named):
        check(name in known, f"charts/nccl-operator/templates name the flag {name!r}: not a flag of nccl-operator")


def test_kube_version():
    # kubeVersion stays (native sidecars need 1.29, ValidatingAdmissionPolicy v1 1.30); helm
    # template's default (v1.20.0) is refused, so the docs must name --kube-version.
    done = render(kube_version=None, expect_ok=False)
    check(done.returncode != 0 and ">=1.30" in done.stderr, f"helm template with no --kube-version: {done.stderr.strip()}")
    check(render(kube_version="1.29.9", expect_ok=False).returncode != 0, "the chart must refuse Kubernetes 1.29")
    check(one(render(kube_version="1.30"), "Deployment", "--kube-version 1.30") is not None, "--kube-version 1.30")
    for doc in (ROOT / "README.md", CHART / "README.md"):
        check("helm template nccl-operator charts/nccl-operator -n nccl-system --kube-version 1.30" in doc.read_text(),
              f"{doc.relative_to(ROOT)} must show helm template with --kube-version")


def test_lint():
    for sets in ([], ["--set", "watchNamespace=ml"]):
        done = helm("lint", "--strict", str(CHART), *sets, expect_ok=False)
        check(done.returncode == 0, f"helm lint --strict {sets}:\n{done.stdout}{done.stderr}")


def test_crds_shipped():
    crds = sorted(p.name for p in (CHART / "crds").glob("*.yaml"))
    sources = sorted(p.name for p in (ROOT / "deploy" / "crd").glob("*.yaml"))
    check(crds and crds == sources, f"chart crds/ {crds} != deploy/crd/ {sources}")
    for name in crds:
        crd = yaml.safe_load((CHART / "crds" / name).read_text())
        check(crd["kind"] == "CustomResourceDefinition", f"crds/{name} is not a CRD")


# Today's names with the default values (release nccl-operator): nameOverride and fullnameOverride
# left empty must keep every one of them.
DEFAULT_NAMES = {
    ("ServiceAccount", "nccl-operator"), ("ClusterRole", "nccl-operator"), ("ClusterRoleBinding", "nccl-operator"),
    ("Role", "nccl-operator-leader-election"), ("RoleBinding", "nccl-operator-leader-election"),
    ("Service", "nccl-operator-metrics"), ("Deployment", "nccl-operator"), ("Lease", "nccl-operator-leader"),
    ("NetworkPolicy", "nccl-operator"), ("ValidatingAdmissionPolicy", "nccl-operator-nccl-system-root-id"),
    ("ValidatingAdmissionPolicyBinding", "nccl-operator-nccl-system-root-id"),
    ("ClusterRole", "nccl-operator-nccl-system-edit"), ("ClusterRole", "nccl-operator-nccl-system-view"),
}


def names(objs):
    return {(o["kind"], o["metadata"]["name"]) for o in objs}


def test_names():
    check(names(render()) == DEFAULT_NAMES, f"default names changed: {sorted(names(render()) ^ DEFAULT_NAMES)}")
    sets = ("replicaCount=2", "metrics.serviceMonitor.enabled=true")
    for override, prefix, label in (("fullnameOverride=ops", "ops", "nccl-operator"),
                                    ("nameOverride=training", "nccl-operator-training", "training")):
        objs = render(override, *sets, tests=True)
        for kind, name in sorted(names(objs)):
            check(name.startswith(prefix), f"{override}: {kind} {name} does not start with {prefix}")
        deployment = one(objs, "Deployment", override)
        if deployment:
            check(deployment["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] == label,
                  f"{override}: app.kubernetes.io/name {deployment['spec']['selector']['matchLabels']}")
            check(deployment["spec"]["template"]["spec"]["serviceAccountName"] == prefix,
                  f"{override}: the pod runs as {deployment['spec']['template']['spec']['serviceAccountName']}")
            check(f"--leader-election-id={prefix}-leader" in operator_container(deployment)["args"],
                  f"{override}: the operator elects on another Lease than {prefix}-leader")
    # The release name alone when it holds the name, as before.
    check(("Deployment", "my-nccl-operator") in names(render(release="my-nccl-operator")),
          "a release named my-nccl-operator names its Deployment my-nccl-operator")
    check(render("nameOverride=" + "x" * 64, expect_ok=False).returncode != 0, "a 64-character nameOverride")


def test_pod_disruption_budget():
    check(not of_kind(render(), "PodDisruptionBudget"), "one replica must get no PodDisruptionBudget (it would block drains)")
    check(not of_kind(render("replicaCount=0", "leaderElection.enabled=false"), "PodDisruptionBudget"),
          "no PodDisruptionBudget for 0 replicas")
    objs = render("replicaCount=3", "podDisruptionBudget.maxUnavailable=2")
    pdb = one(objs, "PodDisruptionBudget", "replicaCount=3")
    deployment = one(objs, "Deployment", "replicaCount=3")
    if pdb and deployment:
        check(pdb["apiVersion"] == "policy/v1" and pdb["spec"].get("maxUnavailable") == 2, f"PodDisruptionBudget {pdb}")
        check(pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"],
              "the PodDisruptionBudget selects the operator's pods")
    pdb = one(render("replicaCount=2"), "PodDisruptionBudget", "replicaCount=2")
    check(pdb and pdb["spec"].get("maxUnavailable") == 1, f"replicaCount=2: maxUnavailable 1 by default: {pdb}")
    # Replicas prefer different nodes unless the user placed them.
    def affinity(*sets):
        return one(render(*sets), "Deployment", str(sets))["spec"]["template"]["spec"].get("affinity")
    spread = affinity("replicaCount=2")
    check(spread and spread["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
          ["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname", f"replicaCount=2: no spread over nodes: {spread}")
    check(affinity() is None, "one replica: no affinity")
    check(affinity("replicaCount=2", "affinity.nodeAffinity.x=1") == {"nodeAffinity": {"x": 1}}, "affinity replaces the spread")


def hooks(objs):
    return [o for o in objs if o["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]


def selects(match_labels, labels):
    return all(labels.get(k) == v for k, v in match_labels.items())


def test_helm_test():
    """`helm test`: one pod, no rights, the operator's own image asking the metrics Service."""
    objs = render(tests=True)
    tests = hooks(objs)
    check(sorted(o["kind"] for o in tests) == ["NetworkPolicy", "Pod"], f"test hooks {[o['kind'] for o in tests]}")
    check(not hooks(render()), "--skip-tests still renders test hooks")
    pod = next((o for o in tests if o["kind"] == "Pod"), None)
    service = one(objs, "Service", "helm test")
    if not pod or not service:
        return
    spec = pod["spec"]
    check(spec["restartPolicy"] == "Never" and spec.get("automountServiceAccountToken") is False,
          "the test pod runs once and holds no token")
    check("serviceAccountName" not in spec, "the test pod needs no ServiceAccount of its own")
    (c,) = spec["containers"]
    check(c["image"] == f"nccl-operator:{APP_VERSION}" and c["command"] == ["nccl-operator"],
          f"the test runs the operator's image: {c['image']} {c['command']}")
    known = operator_flag_names()
    for arg in c["args"]:
        check(arg.startswith("--") and arg[2:].split("=", 1)[0] in known, f"the test pod passes {arg!r}: not a flag")
    port = service["spec"]["ports"][0]["port"]
    check(c["args"] == [f"--check-url=http://{service['metadata']['name']}:{port}/metrics"],
          f"the test asks the metrics Service: {c['args']}")
    check(c["securityContext"].get("readOnlyRootFilesystem") is True and spec["securityContext"].get("runAsNonRoot"),
          "the test pod runs as the operator does: non-root, read-only")
    labels = pod["metadata"]["labels"]
    check(labels.get("app.kubernetes.io/part-of") == "nccl-operator", "the test pod's part-of label")
    for o in objs:
        selector = {"Service": lambda o: o["spec"].get("selector"),
                    "PodDisruptionBudget": lambda o: o["spec"]["selector"]["matchLabels"],
                    "NetworkPolicy": lambda o: o["spec"]["podSelector"]["matchLabels"]}.get(o["kind"], lambda o: None)(o)
        if selector and o not in tests:
            check(not selects(selector, labels), f"{o['kind']} {o['metadata']['name']} selects the test pod")
    policy = next(o for o in tests if o["kind"] == "NetworkPolicy")
    check(selects(policy["spec"]["podSelector"]["matchLabels"], labels), "the test's NetworkPolicy selects the test pod")
    check(not policy["spec"].get("ingress") and "Ingress" in policy["spec"]["policyTypes"], "the test pod takes no connections")
    check(not hooks(render("metrics.enabled=false", tests=True)), "no test without the metrics Service it asks")
    check([o["kind"] for o in hooks(render("networkPolicy.enabled=false", tests=True))] == ["Pod"],
          "networkPolicy.enabled=false: the test makes no NetworkPolicy either")


def test_chart_metadata():
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    check(str(chart["version"]) == APP_VERSION, "the chart's version is the release's (tests/version/check_version.py)")
    check(chart.get("kubeVersion") and chart.get("maintainers"), "Chart.yaml names kubeVersion and maintainers")
    licence = (ROOT / "LICENSE").read_text()
    declared = chart.get("annotations", {}).get("artifacthub.io/license")
    check(declared == "Apache-2.0" and "Apache License" in licence and "Version 2.0" in licence,
          f"Chart.yaml's licence {declared!r} is the repository's LICENSE")
    crds = yaml.safe_load(chart["annotations"]["artifacthub.io/crds"])
    crd = yaml.safe_load((ROOT / "deploy" / "crd" / "nccl.dev_nccljobs.yaml").read_text())
    check([(c["kind"], c["version"], c["name"]) for c in crds] ==
          [(crd["spec"]["names"]["kind"], v["name"], crd["metadata"]["name"]) for v in crd["spec"]["versions"]],
          f"Chart.yaml's artifacthub.io/crds names the CRD's kind and versions: {crds}")


RBAC_HEADING = "### What the operator may do (RBAC)"


def readme_rbac_rows():
    """(groups, resources, verbs, cluster-scoped) of each row of the chart README's RBAC table."""
    text = (CHART / "README.md").read_text()
    section = text.split(RBAC_HEADING, 1)[1].split("\n### ", 1)[0] if RBAC_HEADING in text else ""
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or len(cells) < 4 or cells[0] in ("API group", "---"):
            continue
        groups = ["" if g.strip() == "core" else g.strip(" `") for g in cells[0].split(",")]
        resources = re.findall(r"`([a-z/]+)`", cells[1])
        rows.append((groups, resources, set(cells[2].split()), "cluster-scoped" in cells[1] or "metrics.secure" in cells[1],
                     "metrics.secure.enabled" in cells[1]))
    return rows


def test_readme_rbac_table():
    """The chart README's RBAC table is what the templates grant the operator, no more, no less."""
    rows = readme_rbac_rows()
    if not check(rows, f"charts/nccl-operator/README.md: no table under {RBAC_HEADING!r}"):
        return
    documented, cluster_scoped = {}, set()
    for groups, resources, verbs, cluster, secure_only in rows:
        for group in groups:
            for resource in resources:
                if secure_only:
                    check(SECURE_METRICS_RULES.get((group, resource)) == verbs,
                          f"RBAC table: {(group, resource)} {sorted(verbs)} is not what metrics.secure grants")
                    continue
                documented.setdefault((group, resource), set()).update(verbs)
                if cluster:
                    cluster_scoped.add((group, resource))
    objs = render()
    granted = rules_map(one(objs, "ClusterRole", "RBAC table")["rules"])
    for key, verbs in rules_map(one(objs, "Role", "RBAC table")["rules"]).items():
        granted.setdefault(key, set()).update(verbs)
    for key in sorted(set(documented) | set(granted)):
        check(documented.get(key) == granted.get(key),
              f"charts/nccl-operator/README.md RBAC table: {key} says {sorted(documented.get(key, []))}, "
              f"the templates grant {sorted(granted.get(key, []))}")
    check(cluster_scoped == set(CLUSTER_READ_RULES),
          f"the rows marked cluster-scoped {sorted(cluster_scoped)} are not the cluster-scoped reads {sorted(CLUSTER_READ_RULES)}")


def test_secure_metrics():
    """metrics.secure: the operator may review callers (nothing more), a metrics-reader ClusterRole
    for /metrics, the flags, HTTPS in the ServiceMonitor, no helm test pod."""
    for sets, where in ((("metrics.secure.enabled=true",), "cluster-wide"),
                        (("metrics.secure.enabled=true", "watchNamespace=team-a"), "one namespace")):
        objs = render(*sets, "metrics.serviceMonitor.enabled=true", tests=True)
        roles = [o for o in objs if o["kind"] == "ClusterRole" and not user_role(o)
                 and not o["metadata"]["name"].endswith("-metrics-reader")]
        granted = {}
        for role in roles:
            for key, verbs in rules_map(role["rules"]).items():
                granted.setdefault(key, set()).update(verbs)
        for key, verbs in SECURE_METRICS_RULES.items():
            check(granted.get(key) == verbs, f"{where}: metrics.secure grants {key} {sorted(granted.get(key, []))}")
        reader = [o for o in objs if o["kind"] == "ClusterRole" and o["metadata"]["name"].endswith("-metrics-reader")]
        check(len(reader) == 1 and reader[0]["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
              f"{where}: a metrics-reader ClusterRole for get /metrics: {reader}")
        args = operator_container(one(objs, "Deployment", where))["args"]
        check("--metrics-secure" in args and not any(a.startswith("--metrics-cert-dir") for a in args),
              f"{where}: --metrics-secure, a self-signed certificate: {args}")
        endpoint = one(objs, "ServiceMonitor", where)["spec"]["endpoints"][0]
        check(endpoint.get("scheme") == "https" and endpoint.get("bearerTokenFile") and endpoint.get("honorLabels") is True,
              f"{where}: the ServiceMonitor scrapes over HTTPS with Prometheus' token: {endpoint}")
        check(not [o for o in objs if o["kind"] == "Pod"], f"{where}: no helm test pod with metrics.secure")
    objs = render("metrics.secure.enabled=true", "metrics.secure.certSecret=metrics-tls")
    deployment = one(objs, "Deployment", "certSecret")
    check("--metrics-cert-dir=/etc/nccl-operator/metrics-tls" in operator_container(deployment)["args"] and
          any(v.get("secret", {}).get("secretName") == "metrics-tls" for v in deployment["spec"]["template"]["spec"]["volumes"]),
          "metrics.secure.certSecret mounts the Secret and passes --metrics-cert-dir")
    check(not [o for o in render() if o["kind"] == "ClusterRole" and o["metadata"]["name"].endswith("-metrics-reader")],
          "no metrics-reader ClusterRole by default")


def main():
    for test in (test_lint, test_defaults, test_user_roles, test_one_namespace, test_switches, test_sidecar_values, test_gpu_resource_name, test_operations_values,
                 test_replicas_need_leader_election,
                 test_extra_args, test_every_flag_the_chart_passes_exists, test_misspelt_values_are_refused, test_kube_version, test_crds_shipped,
                 test_names, test_pod_disruption_budget, test_helm_test, test_chart_metadata, test_readme_rbac_table, test_secure_metrics):
        before = len(failures)
        test()
        print(f"{'ok  ' if len(failures) == before else 'FAIL'} {test.__name__}")
    for f in failures:
        print("  -", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
