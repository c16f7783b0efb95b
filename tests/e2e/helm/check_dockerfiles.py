#!/usr/bin/env python3
"""Reads deploy/docker/*.Dockerfile (no Docker engine is needed) and asserts what can be known
without building: multi-stage from debian:bookworm to debian:bookworm-slim, the build stage
installs only packages scripts/setup.sh also installs, every COPY from the build context names
a path that exists, the final stage runs as a numeric non-root user with an exec-form
ENTRYPOINT or CMD, and every binary copied out of the build stage is one CMake builds."""
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCKER_DIR = ROOT / "deploy" / "docker"
EXPECTED = {"operator.Dockerfile", "sidecar.Dockerfile", "trainer-base.Dockerfile"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def instructions(text):
    """Yields (KEYWORD, arguments) with continuation lines joined and comments dropped."""
    logical = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):  # comments, also between continuation lines
            continue
        if stripped.endswith("\\"):
            logical += stripped[:-1] + " "
            continue
        logical += stripped
        if logical:
            keyword, _, rest = logical.partition(" ")
            yield keyword.upper(), rest.strip()
        logical = ""


def setup_packages():
    text = (ROOT / "scripts" / "setup.sh").read_text()
    match = re.search(r"packages=\(([^)]*)\)", text)
    return set(match.group(1).split()) if match else set()


def check_dockerfile(path, allowed_packages):
    name = path.name
    stages = []  # one list of (keyword, args) per FROM
    for keyword, args in instructions(path.read_text()):
        if keyword == "FROM":
            stages.append([])
        check(stages, f"{name}: {keyword} before the first FROM")
        if stages:
            stages[-1].append((keyword, args))
    if not check(len(stages) >= 2, f"{name}: want a multi-stage build, got {len(stages)} stage(s)"):
        return
    check(stages[0][0][1].startswith("debian:bookworm AS "), f"{name}: build stage FROM {stages[0][0][1]}")
    check(stages[-1][0][1] == "debian:bookworm-slim", f"{name}: final stage FROM {stages[-1][0][1]}")

    for keyword, args in stages[0]:
        if keyword == "RUN" and "apt-get install" in args:
            words = [w for w in shlex.split(args.split("apt-get install", 1)[1].split("&&")[0])
                     if not w.startswith("-")]
            extra = set(words) - allowed_packages
            check(not extra, f"{name}: build stage installs {sorted(extra)}, which scripts/setup.sh does not")

    for stage in stages:
        for keyword, args in stage:
            if keyword not in ("COPY", "ADD"):
                continue
            check(keyword == "COPY", f"{name}: use COPY, not ADD")
            words = shlex.split(args)
            if any(w.startswith("--from=") for w in words):
                continue
            sources = [w for w in words if not w.startswith("--")][:-1]
            for source in sources:
                check((ROOT / source).exists(), f"{name}: COPY source {source} does not exist in the repository")

    final = stages[-1]
    users = [args for keyword, args in final if keyword == "USER"]
    if check(users, f"{name}: the final stage sets no USER (it would run as root)"):
        uid = users[-1].split(":")[0]
        check(uid.isdigit() and int(uid) != 0,
              f"{name}: USER {users[-1]} must be a numeric non-root uid (runAsNonRoot needs a number)")
    starts = [(k, a) for k, a in final if k in ("ENTRYPOINT", "CMD")]
    if check(starts, f"{name}: the final stage has no ENTRYPOINT or CMD"):
        check(starts[-1][1].startswith("["), f"{name}: {starts[-1][0]} must be exec form (no shell)")
    for keyword, args in final:
        if keyword == "COPY" and "--from=build" in args:
            source = shlex.split(args)[1]
            match = re.fullmatch(r"/src/build/(\w+)/(nccl-[\w-]+)", source)
            if match:
                cmake = (ROOT / match.group(1) / "CMakeLists.txt")
                check(cmake.exists() and match.group(2) in cmake.read_text(),
                      f"{name}: {source}: {match.group(1)}/CMakeLists.txt builds no {match.group(2)}")
    check(path.with_name(name + ".dockerignore").exists(),
          f"{name}: no {name}.dockerignore: build directories and .git would be sent as context")


def main():
    found = {p.name for p in DOCKER_DIR.glob("*.Dockerfile")}
    check(EXPECTED <= found, f"missing Dockerfiles: {sorted(EXPECTED - found)}")
    allowed = setup_packages()
    check(allowed, "could not read the package list of scripts/setup.sh")
    # The final stages install runtime libraries, which setup.sh gets as dependencies.
    for name in sorted(found):
        before = len(failures)
        check_dockerfile(DOCKER_DIR / name, allowed)
        print(f"{'ok  ' if len(failures) == before else 'FAIL'} {name}")
    for f in failures:
        print("  -", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
