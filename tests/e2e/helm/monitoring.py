"""The chart's dashboard and alerts, read for the checks: rendered by helm, every PromQL expression
in them parsed by a real PromQL parser (the promql-parser package, pinned in
tests/harness/versions.env, installed into the build dir) and the metric names it selects.
Used by check_monitoring.py and by tests/integration/metrics/scrape_test.py (the names against a
running operator's /metrics)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "charts" / "nccl-operator"
RELEASE = "t"
RELEASE_NS = "nccl-system"
ON = ["metrics.dashboard.enabled=true", "metrics.prometheusRule.enabled=true", "metrics.serviceMonitor.enabled=true"]
# Grafana's variables, given values so an expression can be parsed as Prometheus would see it.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$job": "x"}


def pin(name):
    text = (ROOT / "tests" / "harness" / "versions.env").read_text()
    return re.search(rf"^{name}=(\S+)$", text, re.M).group(1)


def import_promql_parser(build_dir):
    spec = pin("PROMQL_PARSER_PIN")
    target = Path(build_dir) / "pydeps" / spec.replace("==", "-")
    if not (target / "promql_parser").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--root-user-action=ignore", "--no-deps", "--target", str(target), spec], check=True)
    sys.path.insert(0, str(target))
    import promql_parser
    return promql_parser


def helm_binary():
    helm = os.environ.get("NCCLOP_TEST_HELM") or os.environ.get("HELM")
    if helm:
        return helm
    out = subprocess.run([str(ROOT / "tests/harness/controlplane/build.sh")], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    return str(Path(out) / "helm")


def render(*sets):
    args = [helm_binary(), "template", RELEASE, str(CHART), "--namespace", RELEASE_NS, "--kube-version", "1.35.0"]
    for s in list(ON) + list(sets):
        args += ["--set", s]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"helm template {' '.join(sets)}: {done.stderr}")
    return [o for o in yaml.safe_load_all(done.stdout) if o]


def rule_groups(objs):
    rules = [o for o in objs if o["kind"] == "PrometheusRule"]
    return rules[0]["spec"]["groups"] if rules else []


def dashboards(objs):
    """(ConfigMap, dashboard JSON) of each dashboard ConfigMap."""
    out = []
    for o in objs:
        if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard"):
            for text in o["data"].values():
                out.append((o, json.loads(text)))
    return out


def dashboard_exprs(dashboard):
    """(panel title, expression with Grafana's variables filled in) of every query."""
    out = []
    for panel in dashboard.get("panels", []):
        for target in panel.get("targets", []):
            expr = target["expr"]
            for name, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(name, value)
            out.append((panel["title"], expr))
    return out


def selected_names(promql_parser, expr):
    """The metric names an expression selects, walking the parser's syntax tree."""
    names = set()

    def walk(node):
        if node is None or isinstance(node, (str, int, float, bool)):
            return
        if isinstance(node, (list, tuple)):
            for n in node:
                walk(n)
            return
        kind = type(node).__name__
        if kind == "VectorSelector":
            names.add(node.name)
            return
        for attr in ("expr", "lhs", "rhs", "args", "param", "vector_selector"):
            if hasattr(node, attr):
                walk(getattr(node, attr))

    walk(promql_parser.parse(expr))
    names.discard(None)
    return names


def family_of(name, families):
    """The catalog family a selected series name belongs to (a histogram's _bucket/_sum/_count)."""
    if name in families:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and families.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)]
    return None
