#!/usr/bin/env python3
"""The NcclJob CRD against the real API server of the pinned Kubernetes, as a user meets it:

  - it installs with `kubectl apply --server-side` (the documented way) and is Established;
  - `kubectl explain` reads the pod template down to its leaves with Kubernetes' own docs;
  - the pinned kubectl's `apply` validates strictly by default, and a misspelled field of the
    trainer container (`resouces`) is refused, naming it; the same job spelled right is taken;
  - the project's own rules on the template still hold (restartPolicy Never, nccl-sidecar
    reserved), and a quantity is a string or an integer.

Env (set by CTest): NCCLOP_TEST_KUBECONFIG, NCCLOP_TEST_KUBECTL, NCCLOP_CRD_FILE.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

failures = []


def check(ok, message, detail=""):
    print(("ok   " if ok else "FAIL ") + message)
    if not ok:
        failures.append(message)
        if detail:
            print("     " + detail.strip().replace("\n", "\n     "))
    return ok


def kubectl(*args, stdin=None):
    done = subprocess.run([os.environ["NCCLOP_TEST_KUBECTL"], *args], input=stdin, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def kubectl_until(done, *args, seconds=60):
    """kubectl *args every 0.5 s until done(rc, out) or the deadline; the last (rc, out)."""
    deadline = time.monotonic() + seconds
    while True:
        rc, out = kubectl(*args)
        if done(rc, out) or time.monotonic() > deadline:
            return rc, out
        time.sleep(0.5)


def job(name, container_extra="", spec_extra=""):
    return (f"apiVersion: nccl.dev/v1alpha1\nkind: NcclJob\nmetadata:\n  name: {name}\nspec:\n"
            f"  template:\n    spec:\n{spec_extra}      containers:\n      - name: trainer\n"
            f"        image: trainer:1\n{container_extra}")


def main():
    os.environ["KUBECONFIG"] = os.environ["NCCLOP_TEST_KUBECONFIG"]
    # kubectl's discovery and OpenAPI cache of its own: the shared one (~/.kube/cache, by host and
    # port) may hold what an earlier control plane on the same port served, without this CRD.
    cache = tempfile.TemporaryDirectory(prefix="crd-schema-kubectl-cache-")
    os.environ["KUBECACHEDIR"] = cache.name
    rc, out = kubectl("apply", "--server-side", "--force-conflicts", "-f", os.environ["NCCLOP_CRD_FILE"])
    if not check(rc == 0, "the CRD installs with kubectl apply --server-side", out):
        return 1
    # Polled, not `kubectl wait`: that errs at once while a just-made CRD has no status conditions yet.
    rc, out = kubectl_until(lambda rc, out: rc == 0 and out == "True", "get", "crd/nccljobs.nccl.dev", "-o",
                            'jsonpath={.status.conditions[?(@.type=="Established")].status}')
    check(rc == 0 and out == "True", "the CRD is Established", out)
    # Established comes before the API server publishes the CRD's OpenAPI schema (its own
    # controller, a moment later): until then kubectl explain finds no such resource.
    rc, out = kubectl_until(lambda rc, out: rc == 0 or "couldn't find resource" not in out, "explain", "nccljob.spec")
    check(rc == 0, "kubectl explain finds the NcclJob resource", out)

    rc, out = kubectl("explain", "nccljob.spec.template.spec.containers.resources")
    check(rc == 0 and "Compute Resources required by this container" in out and re.search(r"limits\s+<map", out),
          "kubectl explain nccljob.spec.template.spec.containers.resources prints Kubernetes' docs", out)
    rc, out = kubectl("explain", "nccljob.spec.template.spec.containers.env.valueFrom.secretKeyRef.key")
    check(rc == 0 and "The key of the secret to select from" in out,
          "kubectl explain reads the template to its leaves (env.valueFrom.secretKeyRef.key)", out)
    rc, out = kubectl("explain", "nccljob.spec.failurePolicy.maxBackoffSeconds")
    check(rc == 0 and "DESCRIPTION:" in out and "backoffSeconds" in out, "our own fields are described too", out)

    rc, out = kubectl("apply", "--help")
    check("--validate='strict'" in out, "the pinned kubectl's apply validates strictly by default", out[:300])

    ns = f"crd-schema-{os.getpid()}"
    kubectl("create", "namespace", ns)
    try:
        typo = job("typo", "        resouces:\n          limits:\n            cpu: \"1\"\n")
        rc, out = kubectl("apply", "-n", ns, "-f", "-", stdin=typo)
        check(rc != 0 and 'unknown field "spec.template.spec.containers[0].resouces"' in out,
              "kubectl apply refuses a misspelled trainer field (resouces), naming it", out)
        rc, _ = kubectl("get", "nj", "typo", "-n", ns)
        check(rc != 0, "nothing was created for the refused job")

        right = job("right", "        resources:\n          limits:\n            cpu: \"1\"\n")
        rc, out = kubectl("apply", "-n", ns, "-f", "-", stdin=right)
        check(rc == 0, "the same job spelled right is created", out)
        rc, out = kubectl("get", "nj", "right", "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].resources.limits.cpu}")
        check(rc == 0 and out == "1", "its resources are kept as written", out)

        rc, out = kubectl("apply", "-n", ns, "--dry-run=server", "-f", "-",
                          stdin=job("always", spec_extra="      restartPolicy: Always\n"))
        check(rc != 0 and "restartPolicy" in out, "restartPolicy other than Never is refused", out)
        rc, out = kubectl("apply", "-n", ns, "--dry-run=server", "-f", "-",
                          stdin=job("reserved", "      - name: nccl-sidecar\n        image: x:1\n"))
        check(rc != 0 and "reserved for the injected sidecar" in out, "the container name nccl-sidecar is refused", out)
        rc, out = kubectl("apply", "-n", ns, "--dry-run=server", "-f", "-",
                          stdin=job("badqty", "        resources:\n          limits:\n            cpu: one\n"))
        check(rc != 0 and "cpu" in out, "a malformed quantity is refused at apply", out)
        rc, out = kubectl("apply", "-n", ns, "--dry-run=server", "-f", "-",
                          stdin=job("intqty", "        resources:\n          limits:\n            cpu: 2\n"
                                    "            memory: 500Mi\n"))
        check(rc == 0, "an integer or a string quantity is taken", out)
    finally:
        kubectl("delete", "namespace", ns, "--wait=false")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
