#!/usr/bin/env python3
"""--metrics-secure against the real API server: the operator serves /metrics over HTTPS and
asks the API server who calls (TokenReview) and whether they may get /metrics
(SubjectAccessReview). A ServiceAccount bound to the chart's metrics-reader ClusterRole (rendered
from the chart) gets 200 and the metrics, one without it 403, a request without a token 401, a
made-up token 401; plain HTTP gets no answer.

Env (set by CTest): NCCLOP_TEST_KUBECONFIG, NCCLOP_TEST_KUBECTL, NCCLOP_TEST_HELM, NCCLOP_OPERATOR_BIN.
"""
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
failures = []


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message.splitlines()[0])
    if not ok:
        failures.append(message)
    return ok


def kubectl(*args, stdin=None):
    done = subprocess.run([os.environ["NCCLOP_TEST_KUBECTL"], *args], input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"kubectl {' '.join(args)}: {done.stderr}")
    return done.stdout


def wait_for(what, predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    sys.exit(f"FAIL {what} (not within {timeout}s)")


def https_address(log_path):
    for line in Path(log_path).read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("msg") == "serving metrics over HTTPS":
            return record.get("address")
    return None


def reader_role(name):
    """The chart's metrics-reader ClusterRole, under a name of this test's own."""
    done = subprocess.run([os.environ["NCCLOP_TEST_HELM"], "template", "t", str(ROOT / "charts" / "nccl-operator"),
                           "--kube-version", "1.35.0", "--set", "metrics.secure.enabled=true",
                           "--show-only", "templates/metrics-reader.yaml"], capture_output=True, text=True, check=True)
    role = yaml.safe_load(done.stdout)
    role["metadata"] = {"name": name}
    return role


def get(url, token=None):
    """(status code, body) of a GET over TLS that does not verify the operator's self-signed certificate."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=15, context=context) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main():
    os.environ["KUBECONFIG"] = os.environ["NCCLOP_TEST_KUBECONFIG"]
    ns = f"metrics-secure-{os.getpid()}"
    role = f"{ns}-reader"
    kubectl("create", "namespace", ns)
    kubectl("apply", "-f", "-", stdin=json.dumps(reader_role(role)))
    kubectl("create", "serviceaccount", "reader", "-n", ns)
    kubectl("create", "serviceaccount", "stranger", "-n", ns)
    kubectl("create", "clusterrolebinding", role, f"--clusterrole={role}", f"--serviceaccount={ns}:reader")
    reader = kubectl("create", "token", "reader", "-n", ns).strip()
    stranger = kubectl("create", "token", "stranger", "-n", ns).strip()
    work = tempfile.mkdtemp(prefix="ncclop-metrics-secure-")
    log_path = os.path.join(work, "operator.log")
    with open(log_path, "w") as log:
        operator = subprocess.Popen(
            [os.environ["NCCLOP_OPERATOR_BIN"], "--kubeconfig=" + os.environ["NCCLOP_TEST_KUBECONFIG"],
             "--namespace=" + ns, "--metrics-bind-address=127.0.0.1:0", "--metrics-secure",
             "--health-probe-bind-address=0", "--log-format=json"], stdout=log, stderr=subprocess.STDOUT)
    try:
        address = wait_for("the operator serves /metrics over HTTPS", lambda: https_address(log_path))
        url = f"https://{address}/metrics"
        code, body = get(url, reader)
        check(code == 200 and "ncclop_build_info" in body and "controller_runtime_reconcile_total" in body,
              f"a ServiceAccount with the metrics-reader role: {code} and the metrics ({body[:200]!r})")
        # The second scrape is answered from the cache of reviews, the same way.
        code, _ = get(url, reader)
        check(code == 200, f"the same reader again: {code}")
        code, body = get(url, stranger)
        check(code == 403, f"a ServiceAccount without the role: {code} {body.strip()!r}")
        code, body = get(url)
        check(code == 401, f"no token: {code} {body.strip()!r}")
        code, body = get(url, "not-a-token")
        check(code == 401, f"a token the API server does not know: {code} {body.strip()!r}")
        try:
            with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as reply:
                plain = reply.status
        except (urllib.error.URLError, ConnectionError, OSError) as e:
            plain = type(e).__name__
        check(plain != 200, f"plain HTTP gets no metrics: {plain}")
    finally:
        operator.terminate()
        operator.wait(timeout=30)
        for args in (["delete", "clusterrolebinding", role], ["delete", "clusterrole", role],
                     ["delete", "namespace", ns, "--wait=false"]):
            subprocess.run([os.environ["NCCLOP_TEST_KUBECTL"], *args], capture_output=True)
    if failures:
        print(Path(log_path).read_text()[-3000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
