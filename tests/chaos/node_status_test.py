#!/usr/bin/env python3
"""testnode resends a pod status the API server could not take (found by chaos.py's apiserver
runs: a pod that ended while kube-apiserver restarted stayed Running in the API for good, so its
NcclJob never finished). On a control plane of its own (bridge tnc<--bridge-index>, default 15): a pod runs; kube-apiserver
is SIGKILLed; the pod's container ends, so testnode's status update fails (its log says so); the
API server starts again; the pod must read Succeeded within 30 s.

  tests/chaos/node_status_test.py [--build DIR] [--work DIR]"""
import argparse
import os
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import Cluster, log, wait_until  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..", "build"))
    ap.add_argument("--work", default=None, help="state dir (default BUILD/chaos-node-status; wiped first)")
    ap.add_argument("--bridge-index", type=int, default=15, choices=range(11, 16), metavar="11..15",
                    help="testnode bridge tnc<i>, pods on 10.246.<i>.0/24 (default 15; one per concurrent run)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: needs root (testnode's network namespaces)")
        return 77
    work = os.path.abspath(args.work or f"{args.build}/chaos-node-status")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    release = f"{work}/release"
    c = Cluster(work, args.build, ns="nodestatus", bridge_index=args.bridge_index, with_operator=False)
    try:
        c.start()
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ends-while-away"},
               "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 2,
                        "containers": [{"name": "main", "image": "nccl-trainer:0.1.0",
                                        "command": ["/bin/sh", "-c", f"while [ ! -e {release} ]; do sleep 0.1; done"]}]}}
        code, _ = c.api.call("POST", f"/api/v1/namespaces/{c.ns}/pods", pod)
        assert code == 201, f"creating the pod: HTTP {code}"
        path = f"/api/v1/namespaces/{c.ns}/pods/ends-while-away"
        wait_until("pod Running", 60, lambda: (c.api.get(path) or {}).get("status", {}).get("phase") == "Running")
        os.kill(c.apiserver_pid(), signal.SIGKILL)
        with open(release, "w"):
            pass
        wait_until("testnode's status update failed", 60, lambda: "ends-while-away: status update" in open(f"{work}/node.log").read())
        log("the update failed while the API server was away; starting it again")
        c.controlplane("restart-apiserver")
        started = time.monotonic()
        try:
            wait_until("pod Succeeded in the API", 30,
                       lambda: (c.api.get(path) or {}).get("status", {}).get("phase") == "Succeeded")
        except TimeoutError as e:
            print(f"FAIL {e}: phase {(c.api.get(path) or {}).get('status', {}).get('phase')}")
            return 1
        print(f"ok   the pod's Succeeded reached the API {time.monotonic() - started:.1f} s after the API server was back")
        return 0
    finally:
        c.stop()


if __name__ == "__main__":
    sys.exit(main())
