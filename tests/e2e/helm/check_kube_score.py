#!/usr/bin/env python3
"""kube-score (github.com/zegl/kube-score, pinned in tests/harness/versions.env) on what
the operator sets: the rendered chart, and the objects a running operator makes for the jobs of
deploy/examples (pods, Service, RBAC). No finding may concern the operator's own part; the
findings left (the user's trainer container, the namespace's network policy, one replica by
default) are listed below with why, printed as a table, and any other finding fails the test.

Env (set by CTest): NCCLOP_TEST_HELM, NCCLOP_TEST_KUBECTL, NCCLOP_TEST_KUBECONFIG,
NCCLOP_OPERATOR_BIN.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
KUBE_VERSION = "v1.35"  # helm template wants a version, kube-score "vN.NN": both take this
SIDECAR = "nccl-sidecar"

# (object kind, check id, container or "" for the pod) -> why it is left. The trainer is the
# user's container: its image policy, resources and securityContext are the user's choice.
LEFT = {
    ("Deployment", "deployment-replicas", ""):
        "one operator replica by default: the operator is level-triggered, so a restart loses nothing; "
        "replicaCount=2 (leader election is on) adds a hot standby",
    ("Pod", "pod-networkpolicy", ""):
        "who may reach a job's pods is the namespace owner's policy; deploy/examples/networkpolicy.yaml "
        "is one (scored with the demo job, which then has no such finding)",
}
TRAINER_CHECKS = {
    "container-resources", "container-image-pull-policy", "container-ephemeral-storage-request-and-limit",
    "container-security-context-user-group-id", "container-security-context-readonlyrootfilesystem",
    "container-security-context-privileged", "container-image-tag",
}
TRAINER_REASON = ("the trainer is the user's container: its pull policy, resources and securityContext are the "
                  "user's (deploy/examples keep them short; tests/e2e/flow's restricted scenario runs a compliant one)")


def run(*args, stdin=None, check=True):
    done = subprocess.run(list(args), input=stdin, capture_output=True, text=True)
    if check and done.returncode != 0:
        sys.exit(f"{' '.join(args)}: {done.stderr}")
    return done.stdout


def kube_score(binary, manifests):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(manifests)
    out = run(binary, "score", "--kubernetes-version", KUBE_VERSION, "--output-format", "json", f.name, check=False)
    os.unlink(f.name)
    findings = []
    for obj in json.loads(out):
        kind = obj["type_meta"]["kind"]
        for c in obj["checks"]:
            if c["skipped"] or c["grade"] >= 10:
                continue
            for comment in c["comments"] or [{"path": "", "summary": c["check"]["name"]}]:
                findings.append((obj["object_name"], kind, c["check"]["id"], comment.get("path", ""), comment["summary"]))
    return findings


def why_left(kind, check, path, trainers):
    if path in trainers and check in TRAINER_CHECKS:
        return TRAINER_REASON
    return LEFT.get((kind, check, path))


def chart_manifests(helm, *sets):
    args = [helm, "template", "nccl-operator", str(ROOT / "charts/nccl-operator"), "-n", "nccl-system",
            "--kube-version", KUBE_VERSION]
    for s in sets:
        args += ["--set", s]
    return run(*args)


def operator_objects(kubectl, ns):
    """The objects a running operator makes for deploy/examples' jobs (no node runs them)."""
    examples = [p for p in sorted((ROOT / "deploy/examples").glob("*.yaml"))
                if yaml.safe_load(p.read_text()).get("kind") == "NcclJob"]
    jobs = {yaml.safe_load(p.read_text())["metadata"]["name"]: yaml.safe_load(p.read_text())["spec"].get("replicas", 1)
            for p in examples}
    for p in examples:
        run(kubectl, "apply", "-n", ns, "-f", str(p))
    deadline = time.monotonic() + 60
    while True:
        pods = json.loads(run(kubectl, "get", "pods", "-n", ns, "-o", "json"))["items"]
        if len(pods) == sum(jobs.values()):
            break
        if time.monotonic() > deadline:
            sys.exit(f"the operator made {len(pods)} of {sum(jobs.values())} pods within 60 s")
        time.sleep(0.2)
    listed = json.loads(run(kubectl, "get", "pods,services,serviceaccounts,roles,rolebindings,configmaps",
                            "-n", ns, "-l", "nccl.dev/job-name", "-o", "json"))["items"]
    trainers = set()
    for pod in (o for o in listed if o["kind"] == "Pod"):
        trainers |= {c["name"] for c in pod["spec"]["containers"]}
    return "---\n".join(yaml.safe_dump(o) for o in listed), trainers


def main():
    binary = run(str(ROOT / "tests/harness/kubescore/build.sh")).strip().splitlines()[-1]
    helm, kubectl = os.environ["NCCLOP_TEST_HELM"], os.environ["NCCLOP_TEST_KUBECTL"]
    os.environ["KUBECONFIG"] = os.environ["NCCLOP_TEST_KUBECONFIG"]
    findings = []
    # helm template renders the `helm test` hooks too, so the test pod is scored with the chart.
    monitoring = ["metrics.serviceMonitor.enabled=true", "metrics.dashboard.enabled=true",
                  "metrics.prometheusRule.enabled=true", "metrics.secure.enabled=true", "metrics.secure.certSecret=tls"]
    for sets in ([], ["watchNamespace=ml"], ["metrics.serviceMonitor.enabled=true"], ["replicaCount=2"], monitoring):
        findings += [("chart " + (" ".join(sets) or "defaults"), f) for f in kube_score(binary, chart_manifests(helm, *sets))]

    ns = f"kube-score-{os.getpid()}"
    run(kubectl, "apply", "--server-side", "--force-conflicts", "-f", str(ROOT / "deploy/crd/nccl.dev_nccljobs.yaml"))
    run(kubectl, "create", "namespace", ns)
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    operator = subprocess.Popen([os.environ["NCCLOP_OPERATOR_BIN"], "--kubeconfig=" + os.environ["KUBECONFIG"],
                                 "--namespace=" + ns, "--metrics-bind-address=0", "--health-probe-bind-address=0"],
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        objects, trainers = operator_objects(kubectl, ns)
    finally:
        operator.terminate()
        operator.wait(timeout=30)
        run(kubectl, "delete", "namespace", ns, "--wait=false", check=False)
    findings += [("operator's objects", f) for f in kube_score(binary, objects)]
    policy = yaml.safe_load((ROOT / "deploy/examples/networkpolicy.yaml").read_text())
    policy["metadata"]["namespace"] = ns  # kubectl apply -n would set it
    with_policy = kube_score(binary, objects + "---\n" + yaml.safe_dump(policy))
    demo_left = [f for f in with_policy if f[2] == "pod-networkpolicy" and "/demo-" in f[0]]

    bad, left = [], {}
    for source, (name, kind, check, path, summary) in findings:
        reason = why_left(kind, check, path, trainers)
        if reason is None:
            bad.append(f"{source}: {name} {check} ({path or 'pod'}): {summary}")
        else:
            left.setdefault((kind, check, path if path not in trainers else "<trainer>"), (reason, set()))[1].add(summary)
    print("findings left (kind | check | container | why):")
    for (kind, check, path), (reason, summaries) in sorted(left.items()):
        print(f"  {kind} | {check} | {path or 'pod'} | {reason} [{'; '.join(sorted(summaries))}]")
    ok = True
    if demo_left:
        ok = False
        print(f"FAIL deploy/examples/networkpolicy.yaml does not select the demo pods: {demo_left}")
    if any(f[3] == SIDECAR for _, f in findings):
        ok = False
    for b in bad:
        print("FAIL", b)
    return 0 if ok and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
