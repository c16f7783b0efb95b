"""The parts the chaos harness and the soak run against, all real and local: a control plane of
their own (tests/harness/controlplane, with an audit log of every pod create), one testnode that
runs pods as processes in network namespaces, and nccl-operator as a host process that can be
SIGKILLed and SIGSTOPped. Nothing here fakes a part; it only starts, stops and reads them."""
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GROUP = "nccl.dev"
JOB_LABEL = "nccl.dev/job-name"
ATTEMPT_LABEL = "nccl.dev/attempt"
# Only pod creates are audited, with the created object: enough to prove that no two pods of one
# name and attempt ever existed, small enough to parse after every run.
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  verbs: [create]
  resources: [{group: "", resources: [pods]}]
- level: None
"""


def log(*parts):
    print("[chaos]", *parts, file=sys.stderr, flush=True)


def wait_until(what, seconds, predicate, interval=0.1):
    """Polls predicate until it returns something true; raises TimeoutError after seconds."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what}: not within {seconds} s")
        time.sleep(interval)


class Api:
    """A few calls on the API server with the admin client certificate (cheaper than kubectl)."""

    def __init__(self, cp_dir, env):
        self.url = env["APISERVER_URL"]
        self.ctx = ssl.create_default_context(cafile=f"{cp_dir}/pki/ca.crt")
        self.ctx.load_cert_chain(f"{cp_dir}/pki/admin.crt", f"{cp_dir}/pki/admin.key")

    def call(self, method, path, body=None, timeout=10):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, {}
        except (urllib.error.URLError, OSError, TimeoutError):
            return 0, {}  # the API server is down or restarting

    def get(self, path):
        code, obj = self.call("GET", path)
        return obj if code == 200 else None

    def items(self, path):
        obj = self.get(path)
        return None if obj is None else obj.get("items", [])


def jobs_path(ns, name=""):
    return f"/apis/{GROUP}/v1alpha1/namespaces/{ns}/nccljobs" + (f"/{name}" if name else "")


class Cluster:
    """Control plane + testnode + operator. start() brings them up, stop() takes them down."""

    def __init__(self, work, build, ns="chaos", bridge_index=15, operator_flags=(), with_operator=True,
                 restart_all_feature=False):
        self.work = os.path.abspath(work)
        self.build = os.path.abspath(build)
        self.ns = ns
        self.cp_dir = f"{self.work}/cp"
        self.state = f"{self.work}/node"
        self.trainer_logs = f"{self.work}/trainer-logs"
        self.audit_log = f"{self.work}/audit/audit.log"
        self.bridge = f"tnc{bridge_index}"
        self.subnet = f"10.246.{bridge_index}"  # controlplane.sh puts 10.246.0-15.1 in the cert
        self.node_name = f"chaos-node-{bridge_index}"
        self.operator_flags = list(operator_flags)
        self.with_operator = with_operator
        # Whether testnode declares RestartAllContainersOnContainerExits (as 1.36+ kubelets do), so
        # that jobs may restart in place.
        self.restart_all_feature = restart_all_feature
        self.node_proc = None
        self.operator_proc = None
        self.operator_log = None
        self.operator_starts = 0
        self.env = {}
        self.api = None
        self.metrics_port = None

    # ---- control plane
    def cp_env(self):
        e = dict(os.environ)
        e["CONTROLPLANE_APISERVER_FLAGS"] = (
            f"--audit-policy-file={self.work}/audit/policy.yaml --audit-log-path={self.audit_log} "
            "--audit-log-format=json --audit-log-maxsize=0")
        return e

    def controlplane(self, command):
        subprocess.run([f"{ROOT}/tests/harness/controlplane/controlplane.sh", command, "--dir", self.cp_dir],
                       env=self.cp_env(), check=True, stdout=subprocess.DEVNULL)

    def apiserver_pid(self):
        with open(f"{self.cp_dir}/apiserver.pid") as f:
            return int(f.read().strip())

    def read_env(self):
        env = {}
        with open(f"{self.cp_dir}/env") as f:
            for line in f:
                line = line.strip()
                if line.startswith("export "):
                    line = line[len("export "):]
                if "=" in line:
                    k, v = line.split("=", 1)
                    env[k] = v.strip('"')
        return env

    def established(self):
        """Whether CRD nccljobs.nccl.dev has condition Established True."""
        out = self.kubectl("get", "crd/nccljobs.nccl.dev", "-o",
                           'jsonpath={.status.conditions[?(@.type=="Established")].status}', check=False)
        return out.strip() == "True"

    def kubectl(self, *args, stdin=None, check=True):
        return subprocess.run([f"{self.env['CONTROLPLANE_BIN']}/kubectl", "--kubeconfig",
                               f"{self.cp_dir}/kubeconfig", *args], input=stdin, text=True,
                              capture_output=True, check=check).stdout

    # ---- node
    def start_node(self):
        binary = subprocess.run([f"{ROOT}/tests/harness/node/build.sh"], check=True, capture_output=True,
                                text=True).stdout.strip().splitlines()[-1]
        image_map = f"nccl-sidecar:*={self.build}/sidecar,nccl-trainer:*={self.build}/runtime"
        if os.path.exists(f"{self.state}/ready"):
            os.remove(f"{self.state}/ready")
        self.node_log = open(f"{self.work}/node.log", "a")
        self.node_proc = subprocess.Popen(
            [binary, "--node-name", self.node_name, "--schedule=true", "--port", "0",
             "--state-dir", self.state, "--bridge", self.bridge, "--pod-cidr", f"{self.subnet}.0/24",
             "--cpu", "256", "--memory", "1024Gi", "--max-pods", "1000",
             "--ca-cert", f"{self.cp_dir}/pki/ca.crt", "--ca-key", f"{self.cp_dir}/pki/ca.key",
             "--image-map", image_map, "--kubeconfig", f"{self.cp_dir}/kubeconfig",
             # Without the feature the node declares none (testnode's default is to declare it),
             # and restartStrategy Auto recreates pods.
             *([] if self.restart_all_feature else ["--declared-features="])],
            stdout=self.node_log, stderr=subprocess.STDOUT)
        wait_until("testnode ready", 90, lambda: os.path.exists(f"{self.state}/ready") or
                   self.node_proc.poll() is not None)
        if self.node_proc.poll() is not None:
            raise RuntimeError(f"testnode exited; see {self.work}/node.log")
        with open(f"{self.state}/debug-addr") as f:
            self.debug_addr = f.read().strip()

    def signal_container(self, pod, container, sig="KILL"):
        req = urllib.request.Request(
            f"http://{self.debug_addr}/debug/kill?namespace={self.ns}&pod={pod}&container={container}&signal={sig}",
            method="POST", data=b"")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def container_running(self, pod, container):
        return os.path.exists(f"{self.state}/pids/{self.ns}/{pod}/{container}")

    def container_log(self, pod_obj, container):
        """The current log of a container on the node (gone once the pod is deleted)."""
        meta = pod_obj["metadata"]
        d = f"{self.state}/pods/{self.ns}_{meta['name']}_{meta['uid']}/{container}"
        try:
            text = ""
            for name in sorted(os.listdir(d)):
                with open(f"{d}/{name}", errors="replace") as f:
                    text += f.read()
            return text
        except OSError:
            return ""

    # ---- operator
    def start_operator(self):
        if self.operator_log is None:
            self.operator_log = open(f"{self.work}/operator.log", "a")
        if self.metrics_port is None:
            import socket
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            self.metrics_port = s.getsockname()[1]
            s.close()
        self.operator_proc = subprocess.Popen(
            [f"{self.build}/operator/nccl-operator", f"--kubeconfig={self.cp_dir}/kubeconfig",
             f"--namespace={self.ns}", f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
             "--health-probe-bind-address=0", *self.operator_flags],
            stdout=self.operator_log, stderr=subprocess.STDOUT)
        self.operator_starts += 1

    def operator_exited_by_itself(self):
        return self.operator_proc is not None and self.operator_proc.poll() is not None

    def apiserver_ready(self):
        try:
            self.controlplane("status")
            return True
        except subprocess.CalledProcessError:
            return False

    def delete_jobs(self, names):
        """Deletes these NcclJobs; returns the UIDs of those there were (what must not be left)."""
        uids = set()
        for name in names:
            obj = self.api.get(jobs_path(self.ns, name))
            if obj:
                uids.add(obj["metadata"]["uid"])
            self.api.call("DELETE", jobs_path(self.ns, name))
        return uids

    def kill_operator(self):
        self.operator_proc.send_signal(signal.SIGKILL)
        self.operator_proc.wait()

    def metrics(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
                return r.read().decode()
        except (urllib.error.URLError, OSError):
            return ""

    # ---- etcd
    def compact_etcd(self):
        """Moves etcd's revision on and compacts all history before it (the HTTP gateway)."""
        def post(path, body):
            req = urllib.request.Request(self.env["ETCD_URL"] + path, data=json.dumps(body).encode(),
                                         method="POST", headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read())
        put = post("/v3/kv/put", {"key": "Y2hhb3MvYnVtcA==", "value": "MQ=="})
        revision = int(put["header"]["revision"])
        post("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    def start(self):
        if subprocess.run(["ip", "link", "show", self.bridge], capture_output=True).returncode == 0:
            # testnode would take over the other run's bridge and remove its pods' namespaces
            raise RuntimeError(f"bridge {self.bridge} exists: another chaos or soak run uses it "
                               "(pick another --bridge-index)")
        os.makedirs(f"{self.work}/audit", exist_ok=True)
        os.makedirs(self.trainer_logs, exist_ok=True)
        with open(f"{self.work}/audit/policy.yaml", "w") as f:
            f.write(AUDIT_POLICY)
        log(f"control plane in {self.cp_dir}")
        self.controlplane("up")
        self.env = self.read_env()
        self.api = Api(self.cp_dir, self.env)
        self.kubectl("apply", "--server-side", "-f", f"{ROOT}/charts/nccl-operator/crds/")
        # Polled, not `kubectl wait`: that errs at once while a just-made CRD has no status
        # conditions yet.
        deadline = time.monotonic() + 60
        while not self.established():
            if time.monotonic() > deadline:
                raise RuntimeError("CRD nccljobs.nccl.dev not Established within 60 s")
            time.sleep(0.5)
        if self.api.get(f"/api/v1/namespaces/{self.ns}") is None:
            self.api.call("POST", "/api/v1/namespaces", {"metadata": {"name": self.ns}})
        log("starting testnode")
        self.start_node()
        if self.with_operator:
            self.start_operator()

    def stop(self):
        if self.operator_proc is not None and self.operator_proc.poll() is None:
            self.operator_proc.send_signal(signal.SIGCONT)
            self.operator_proc.terminate()
            try:
                self.operator_proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.operator_proc.kill()
        if self.node_proc is not None and self.node_proc.poll() is None:
            self.node_proc.terminate()
            try:
                self.node_proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.node_proc.kill()
        try:
            os.kill(self.apiserver_pid(), signal.SIGCONT)
        except (OSError, ValueError):
            pass
        subprocess.run([f"{ROOT}/tests/harness/controlplane/controlplane.sh", "down", "--dir", self.cp_dir],
                       env=self.cp_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
