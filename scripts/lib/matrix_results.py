"""Turns scripts/matrix.sh's CTest JUnit files into tests/matrix/results.json (merged with what is
there: a run of some versions or tiers replaces only those) and tests/matrix/RESULTS.md, made from
the JSON alone so the two always agree."""
import argparse
import json
import os
import platform
import subprocess
import xml.etree.ElementTree as ET

KEY_TESTS = ["flow.schedule"]  # named in the summary table


def sh(*cmd, cwd=None):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine():
    cgroup = sh("stat", "-fc", "%T", "/sys/fs/cgroup")
    return f"{platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} cores, " \
           f"cgroup fs {cgroup or '?'}"


def pins(root, minor):
    out = {}
    with open(os.path.join(root, "tests/harness/kube", minor + ".env")) as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                k, v = line.strip().split("=", 1)
                out[k] = v
    return out


def read_junit(path):
    passed, failed, skipped = [], [], []
    for case in ET.parse(path).getroot().iter("testcase"):
        name, status = case.get("name"), case.get("status", "run")
        if case.find("failure") is not None or status == "fail":
            failed.append(name)
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            skipped.append(name)
        else:
            passed.append(name)
    return sorted(passed), sorted(failed), sorted(skipped)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    json_path = os.path.join(a.out, "results.json")
    results = {"versions": {}}
    if os.path.exists(json_path):
        with open(json_path) as f:
            results = json.load(f)
    with open(os.path.join(a.runs, "index")) as f:
        for line in f:
            minor, tier, rc, seconds, started, commit = line.split()
            junit = os.path.join(a.runs, f"{minor}-{tier}.xml")
            passed, failed, skipped = read_junit(junit) if os.path.exists(junit) else ([], [], [])
            entry = results["versions"].setdefault(minor, {"tiers": {}})
            entry["pins"] = pins(a.root, minor)
            entry["tiers"][tier] = {
                "date": started.replace("_", " "), "commit": commit, "machine": machine(),
                "ctest_exit": int(rc), "seconds": int(seconds), "run": len(passed) + len(failed),
                "passed": passed, "failed": failed, "skipped": skipped}
    os.makedirs(a.out, exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(a.out, "RESULTS.md"), "w") as f:
        f.write(render(results))


def render(results):
    lines = ["# The version matrix", "",
             "Made by `scripts/matrix.sh` from [results.json](results.json); do not edit by hand. Each row is",
             "one tier (CTest label) run against one Kubernetes minor's pinned stack",
             "(`tests/harness/kube/<minor>.env`), with the same C++ build.", "",
             "| Kubernetes | tier | run | passed | failed | skipped | " + " | ".join(f"`{t}`" for t in KEY_TESTS) +
             " | seconds | date | commit |",
             "|---|---|---|---|---|---|" + "---|" * len(KEY_TESTS) + "---|---|---|"]
    for minor in sorted(results["versions"], key=lambda v: [int(x) for x in v.split(".")], reverse=True):
        entry = results["versions"][minor]
        for tier in ("integration", "node", "realnode"):
            t = entry["tiers"].get(tier)
            if not t:
                continue
            key = []
            for name in KEY_TESTS:
                key.append("passed" if name in t["passed"] else "FAILED" if name in t["failed"]
                           else "skipped" if name in t["skipped"] else "—")
            lines.append(f"| {entry['pins'].get('KUBE_VERSION', minor)} | {tier} | {t['run']} | {len(t['passed'])} | "
                         f"{len(t['failed'])} | {len(t['skipped'])} | " + " | ".join(key) +
                         f" | {t['seconds']} | {t['date']} | {t['commit']} |")
    lines += ["", "## Pins and machines", ""]
    for minor in sorted(results["versions"], key=lambda v: [int(x) for x in v.split(".")], reverse=True):
        entry = results["versions"][minor]
        pins = ", ".join(f"{k} {v}" for k, v in sorted(entry["pins"].items()))
        machines = sorted({t["machine"] for t in entry["tiers"].values()})
        lines.append(f"- **{minor}**: {pins}. Machine: {'; '.join(machines)}.")
    failures = [(m, tier, name) for m, e in results["versions"].items() for tier, t in e["tiers"].items()
                for name in t["failed"]]
    lines += ["", "## Failures", ""]
    lines += [f"- {m} {tier}: `{name}`" for m, tier, name in sorted(failures)] or ["None."]
    lines += ["", "## Tests per tier", ""]
    for minor in sorted(results["versions"], key=lambda v: [int(x) for x in v.split(".")], reverse=True):
        for tier, t in sorted(results["versions"][minor]["tiers"].items()):
            lines.append(f"- {minor} {tier}: passed " + ", ".join(f"`{n}`" for n in t["passed"]) +
                         ("; skipped " + ", ".join(f"`{n}`" for n in t["skipped"]) if t["skipped"] else ""))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
