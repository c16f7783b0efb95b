#!/usr/bin/env python3
"""The chart's Grafana dashboard and PrometheusRule (values metrics.dashboard, metrics.prometheusRule),
rendered (and linted with helm lint --strict) and loaded: the dashboard is a ConfigMap with the label Grafana's sidecar looks for (named
by values), its JSON loads and every query parses (promql-parser); every alert has a severity, a
summary, a description that names its runbook, and that runbook is a section of
docs/troubleshooting.md; every metric the dashboard and the alerts select is in the operator's
metric catalog (the nccl-operator-metric-catalog program; metrics.scrape holds the catalog to a
running operator's /metrics); promtool (Prometheus' own, tests/harness/promtool/fetch.sh) checks
the rules and the dashboard's queries as rules, and unit-tests each alert on made-up series.

Env (set by CTest): NCCLOP_TEST_HELM, NCCLOP_BUILD_DIR, NCCLOP_METRIC_CATALOG.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import monitoring as m  # noqa: E402

failures = []
SEVERITIES = {"warning", "critical"}


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message.splitlines()[0])
    if not ok:
        failures.append(message)
    return ok


def runbook_sections():
    text = (m.ROOT / "docs" / "troubleshooting.md").read_text()
    return {h.strip() for h in re.findall(r"^### (.+)$", text, re.M)}


def catalog():
    out = subprocess.run([os.environ["NCCLOP_METRIC_CATALOG"]], capture_output=True, text=True, check=True).stdout
    return {f["name"]: f["type"] for f in json.loads(out)}


def test_dashboard(parser, families):
    objs = m.render()
    boards = m.dashboards(objs)
    if not check(len(boards) == 1, f"one dashboard ConfigMap, got {len(boards)}"):
        return []
    cm, board = boards[0]
    check(cm["metadata"]["labels"].get("grafana_dashboard") == "1", "the sidecar's default label grafana_dashboard: \"1\"")
    check(board.get("uid") and board.get("title"), "the dashboard has a uid and a title")
    named = m.dashboards(m.render("metrics.dashboard.label=team_dashboards", "metrics.dashboard.labelValue=yes",
                                  "metrics.dashboard.namespace=grafana"))[0][0]
    check(named["metadata"]["labels"].get("team_dashboards") == "yes" and named["metadata"]["namespace"] == "grafana",
          f"the label and namespace come from values: {named['metadata']}")
    check(not m.dashboards(m.render("metrics.dashboard.enabled=false")), "no dashboard with metrics.dashboard.enabled=false")
    exprs = m.dashboard_exprs(board)
    check(len(exprs) >= 10, f"{len(exprs)} queries")
    for title, expr in exprs:
        try:
            names = m.selected_names(parser, expr)
        except Exception as e:  # the parser's own error
            check(False, f"dashboard panel {title!r}: {expr!r} does not parse: {e}")
            continue
        unknown = [n for n in names if m.family_of(n, families) is None]
        check(names and not unknown, f"dashboard panel {title!r} selects known metrics: {sorted(names)}, unknown {unknown}")
    return exprs


def test_rules(parser, families):
    sections = runbook_sections()
    for sets, where in ((["leaderElection.enabled=true"], "leader election"),
                        (["leaderElection.enabled=false"], "no leader election")):
        objs = m.render(*sets)
        rule = [o for o in objs if o["kind"] == "PrometheusRule"]
        if not check(len(rule) == 1 and rule[0]["apiVersion"] == "monitoring.coreos.com/v1",
                     f"{where}: one monitoring.coreos.com/v1 PrometheusRule"):
            continue
        alerts = [r for g in rule[0]["spec"]["groups"] for r in g["rules"]]
        check({a["alert"] for a in alerts} == {"NcclJobRestartLoop", "NcclJobWaitingForAdmission",
                                               "NcclOperatorNoLeader", "NcclOperatorReconcileErrors"},
              f"{where}: the four alerts: {[a['alert'] for a in alerts]}")
        for a in alerts:
            name = a["alert"]
            notes = a.get("annotations", {})
            check(a.get("labels", {}).get("severity") in SEVERITIES, f"{name}: severity {a.get('labels')}")
            check(len(notes.get("summary", "")) > 10 and len(notes.get("description", "")) > 40,
                  f"{name}: a summary and a description")
            check(f"section {name}." in notes.get("description", "") and name in sections,
                  f"{name}: the description names its runbook, a '### {name}' section of docs/troubleshooting.md")
            names = m.selected_names(parser, a["expr"])
            unknown = [n for n in names if m.family_of(n, families) is None]
            check(names and not unknown, f"{name} ({where}) selects known metrics: {sorted(names)}, unknown {unknown}")
    with_url = m.render("metrics.prometheusRule.runbookBaseURL=https://runbooks.example/nccl")
    urls = {r["alert"]: r["annotations"].get("runbook_url") for g in m.rule_groups(with_url) for r in g["rules"]}
    check(all(u == f"https://runbooks.example/nccl#{a.lower()}" for a, u in urls.items()),
          f"runbook_url is the base URL and the alert's section: {urls}")
    check(not m.rule_groups(m.render("metrics.prometheusRule.enabled=false")), "no rules with metrics.prometheusRule.enabled=false")


def promtool_unit_tests(lease):
    """Each alert fires on series that should fire it, and stays quiet on ones that should not."""
    job = f'job="{m.RELEASE}-nccl-operator-metrics"'
    op = f'{job}, namespace="{m.RELEASE_NS}"'
    return {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {"interval": "10m",
             "input_series": [
                 {"series": f'ncclop_job_restarts_total{{{job}, namespace="team-a", nccljob="loop"}}', "values": "0 1 2 3 4"},
                 {"series": f'ncclop_job_restarts_total{{{job}, namespace="team-a", nccljob="once"}}', "values": "0 1 1 1 1"}],
             "alert_rule_test": [
                 {"eval_time": "40m", "alertname": "NcclJobRestartLoop", "exp_alerts": [
                     {"exp_labels": {"severity": "warning", "job": f"{m.RELEASE}-nccl-operator-metrics",
                                     "namespace": "team-a", "nccljob": "loop"}}]}]},
            {"interval": "1m",
             "input_series": [
                 {"series": f'ncclop_job_waiting_for_admission_seconds{{{job}, namespace="team-b", nccljob="queued"}}',
                  "values": "3000+60x20"}],
             "alert_rule_test": [
                 {"eval_time": "5m", "alertname": "NcclJobWaitingForAdmission", "exp_alerts": []},
                 {"eval_time": "15m", "alertname": "NcclJobWaitingForAdmission", "exp_alerts": [
                     {"exp_labels": {"severity": "warning", "namespace": "team-b", "nccljob": "queued"}}]}]},
            {"interval": "1m",
             "input_series": [
                 {"series": f'leader_election_master_status{{{op}, name="{lease}", pod="a"}}', "values": "1 1 0 0 0 0 0 0 0 0"},
                 {"series": f'leader_election_master_status{{{op}, name="{lease}", pod="b"}}', "values": "0 0 0 0 0 0 0 0 0 0"}],
             "alert_rule_test": [
                 {"eval_time": "4m", "alertname": "NcclOperatorNoLeader", "exp_alerts": []},
                 {"eval_time": "9m", "alertname": "NcclOperatorNoLeader", "exp_alerts": [{"exp_labels": {"severity": "critical"}}]}]},
            {"interval": "1m",
             "input_series": [],
             "alert_rule_test": [
                 {"eval_time": "6m", "alertname": "NcclOperatorNoLeader", "exp_alerts": [{"exp_labels": {"severity": "critical"}}]}]},
            {"interval": "1m",
             "input_series": [
                 {"series": f'controller_runtime_reconcile_total{{{op}, controller="nccljob", result="error"}}', "values": "0+3x40"},
                 {"series": f'controller_runtime_reconcile_total{{{op}, controller="nccljob", result="success"}}', "values": "0+7x40"},
                 {"series": f'controller_runtime_reconcile_errors_total{{{op}, controller="nccljob"}}', "values": "0+3x40"}],
             "alert_rule_test": [
                 {"eval_time": "12m", "alertname": "NcclOperatorReconcileErrors", "exp_alerts": []},
                 {"eval_time": "30m", "alertname": "NcclOperatorReconcileErrors", "exp_alerts": [
                     {"exp_labels": {"severity": "warning"}}]}]},
        ],
    }


def test_promtool(exprs):
    promtool = subprocess.run([str(m.ROOT / "tests/harness/promtool/fetch.sh")], capture_output=True, text=True)
    if not check(promtool.returncode == 0, f"promtool fetched: {promtool.stderr[-500:]}"):
        return
    promtool = promtool.stdout.strip().splitlines()[-1]
    objs = m.render()
    groups = m.rule_groups(objs)
    lease = next(a for o in objs if o["kind"] == "Deployment"
                 for a in o["spec"]["template"]["spec"]["containers"][0]["args"]
                 if a.startswith("--leader-election-id=")).split("=", 1)[1]
    with tempfile.TemporaryDirectory() as work:
        checked = groups + [{"name": "dashboard", "rules": [{"record": f"dashboard:query_{i}", "expr": e}
                                                            for i, (_, e) in enumerate(exprs)]}]
        Path(work, "checked.yaml").write_text(yaml.safe_dump({"groups": checked}))
        done = subprocess.run([promtool, "check", "rules", "checked.yaml"], cwd=work, capture_output=True, text=True)
        check(done.returncode == 0, f"promtool check rules (the alerts and the dashboard's {len(exprs)} queries): "
              f"{(done.stdout + done.stderr).strip()[-2000:]}")
        # The unit tests compare an alert's annotations too; the templates are checked above.
        bare = [{**g, "rules": [{k: v for k, v in r.items() if k != "annotations"} for r in g["rules"]]} for g in groups]
        Path(work, "rules.yaml").write_text(yaml.safe_dump({"groups": bare}))
        Path(work, "tests.yaml").write_text(yaml.safe_dump(promtool_unit_tests(lease)))
        done = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=work, capture_output=True, text=True)
        check(done.returncode == 0, f"promtool test rules: each alert fires when it should, and only then: "
              f"{(done.stdout + done.stderr).strip()[-3000:]}")


def test_lint():
    """helm lint --strict with every monitoring value on, metrics.secure too."""
    args = [m.helm_binary(), "lint", "--strict", str(m.CHART), "--kube-version", "1.35.0"]
    for s in m.ON + ["metrics.secure.enabled=true", "metrics.secure.certSecret=metrics-tls",
                     "metrics.prometheusRule.runbookBaseURL=https://runbooks.example/nccl"]:
        args += ["--set", s]
    done = subprocess.run(args, capture_output=True, text=True)
    check(done.returncode == 0, f"helm lint --strict with the monitoring values on: {(done.stdout + done.stderr)[-1500:]}")


def main():
    parser = m.import_promql_parser(os.environ.get("NCCLOP_BUILD_DIR", tempfile.gettempdir()))
    families = catalog()
    test_lint()
    exprs = test_dashboard(parser, families)
    test_rules(parser, families)
    test_promtool(exprs)
    for f in failures:
        print("  -", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
