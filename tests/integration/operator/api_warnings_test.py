#!/usr/bin/env python3
"""The API server's warnings on the pods the operator creates reach the job's author: a template
whose nodeSelector uses a label deprecated since Kubernetes 1.14 (beta.kubernetes.io/os: the
API server answers each such pod create with a `Warning: 299 - "..."` header) gives exactly one
Warning event APIWarning on the NcclJob, naming the label, with count 1: not one per pod (4
pods) and not again for the next attempt's pods.

Env (set by CTest): NCCLOP_TEST_KUBECONFIG, NCCLOP_TEST_KUBECTL, NCCLOP_OPERATOR_BIN, NCCLOP_CRD_FILE.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

failures = []


def check(ok, message, detail=""):
    print(("ok   " if ok else "FAIL ") + message)
    if not ok:
        failures.append(message)
        if detail:
            print("     " + str(detail).strip().replace("\n", "\n     "))
    return ok


def kubectl(*args, stdin=None):
    done = subprocess.run([os.environ["NCCLOP_TEST_KUBECTL"], *args], input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {done.stderr}")
    return done.stdout


def wait_for(what, predicate, timeout=60):
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except RuntimeError as e:  # e.g. a CRD the API server has not begun to serve yet
            value, last_error = None, e
        if value:
            return value
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not within {timeout}s" + (f" (last error: {last_error})" if last_error else ""))


JOB = """apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata:
  name: warned
spec:
  replicas: 4
  gpusPerPod: 0
  failurePolicy: {backoffSeconds: 0, restartStrategy: Recreate}
  template:
    spec:
      nodeSelector:
        beta.kubernetes.io/os: linux
      containers:
      - name: trainer
        image: trainer:1
"""


def main():
    os.environ["KUBECONFIG"] = os.environ["NCCLOP_TEST_KUBECONFIG"]
    ns = f"apiwarn-{os.getpid()}"
    kubectl("apply", "--server-side", "--force-conflicts", "-f", os.environ["NCCLOP_CRD_FILE"])
    # Polled, not `kubectl wait`: that errs at once while a just-made CRD has no status conditions yet.
    wait_for("CRD nccljobs.nccl.dev Established", lambda: kubectl(
        "get", "crd/nccljobs.nccl.dev", "-o", 'jsonpath={.status.conditions[?(@.type=="Established")].status}') == "True")
    kubectl("create", "namespace", ns)
    log_path = os.path.join(tempfile.mkdtemp(prefix="ncclop-apiwarn-"), "operator.log")
    with open(log_path, "w") as log:
        operator = subprocess.Popen(
            [os.environ["NCCLOP_OPERATOR_BIN"], "--kubeconfig=" + os.environ["NCCLOP_TEST_KUBECONFIG"],
             "--namespace=" + ns, "--metrics-bind-address=0", "--health-probe-bind-address=0"],
            stdout=log, stderr=subprocess.STDOUT)

    def pods(attempt):
        items = json.loads(kubectl("get", "pods", "-n", ns, "-l", f"nccl.dev/job-name=warned,nccl.dev/attempt={attempt}",
                                   "-o", "json"))["items"]
        return [p for p in items if "deletionTimestamp" not in p["metadata"]]

    def warnings():
        return json.loads(kubectl("get", "events", "-n", ns, "--field-selector",
                                  "involvedObject.name=warned,reason=APIWarning", "-o", "json"))["items"]

    try:
        kubectl("apply", "-n", ns, "-f", "-", stdin=JOB)
        wait_for("the 4 pods of attempt 1", lambda: len(pods(1)) == 4)
        wait_for("an APIWarning event", warnings)
        # The next attempt makes all 4 pods again, from the same template: no new event.
        status = {"status": {"phase": "Failed", "containerStatuses": [{
            "name": "trainer", "image": "trainer:1", "imageID": "", "ready": False, "restartCount": 0,
            "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}
        kubectl("patch", "pod", "warned-1", "-n", ns, "--subresource=status", "--type=merge", "-p", json.dumps(status))
        wait_for("the 4 pods of attempt 2", lambda: len(pods(2)) == 4)
        # Attempt 2's creates are done once its pods exist; an event of theirs would be written
        # before the reconcile that made them ends. Give that reconcile a moment.
        time.sleep(2)
        events = warnings()
        check(len(events) == 1, f"exactly one APIWarning event for 8 pods in 2 attempts (got {len(events)})",
              json.dumps([e.get("message") for e in events]))
        if events:
            event = events[0]
            check(event.get("type") == "Warning", "it is a Warning", event.get("type"))
            check(event.get("count", 1) == 1, f"its count is 1 (got {event.get('count')})")
            check("beta.kubernetes.io/os" in event.get("message", "") and "deprecated" in event.get("message", ""),
                  "it names the deprecated label in the API server's words", event.get("message"))
            check(event.get("involvedObject", {}).get("kind") == "NcclJob", "it is on the NcclJob")
    except RuntimeError as e:
        check(False, str(e))
    finally:
        operator.terminate()
        operator.wait(timeout=30)
        subprocess.run([os.environ["NCCLOP_TEST_KUBECTL"], "delete", "namespace", ns, "--wait=false"],
                       capture_output=True)
    if failures:
        print(Path(log_path).read_text()[-4000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
