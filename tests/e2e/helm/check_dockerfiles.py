#!/usr/bin/env python3
"""Reads deploy/docker/Dockerfile (no builder needed; tests/harness/images builds and runs the
images) and asserts what can be known without building: no `# syntax=` line (it makes BuildKit
fetch a frontend image), the base images are build arguments whose defaults are the public names,
one build stage from ${BUILD_IMAGE} installs only packages scripts/setup.sh also installs, the
targets operator and sidecar are FROM scratch and trainer FROM ${TRAINER_BASE_IMAGE}, every COPY
from the build context names a path that exists, each target runs as a numeric non-root user with
an exec-form ENTRYPOINT or CMD, every binary staged out of the build stage is one CMake builds,
and the READMEs' build commands name these targets."""
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE = ROOT / "deploy" / "docker" / "Dockerfile"
TARGETS = {"operator": "scratch", "sidecar": "scratch", "trainer": "${TRAINER_BASE_IMAGE}"}
BASE_ARGS = {"BUILD_IMAGE": "debian:bookworm", "TRAINER_BASE_IMAGE": "debian:bookworm-slim"}
# Packages the build stage may install beyond scripts/setup.sh's: the CA bundle the images carry.
EXTRA_PACKAGES = {"ca-certificates"}
READMES = [ROOT / "README.md", ROOT / "charts" / "nccl-operator" / "README.md", ROOT / "deploy" / "README.md"]

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


def main():
    text = DOCKERFILE.read_text()
    check(not re.search(r"^#\s*syntax\s*=", text, re.M | re.I),
          "Dockerfile: a '# syntax=' line makes BuildKit fetch a frontend image; the built-in one needs none")
    check(DOCKERFILE.with_name("Dockerfile.dockerignore").exists(),
          "no Dockerfile.dockerignore: build directories and .git would be sent as context")

    global_args, stages = {}, {}  # stage name -> (base, [(keyword, args)])
    current = None
    for keyword, args in instructions(text):
        if keyword == "ARG" and current is None:
            name, _, default = args.partition("=")
            global_args[name] = default
            continue
        if keyword == "FROM":
            words = args.split()
            check(len(words) == 3 and words[1].upper() == "AS", f"FROM {args}: every stage needs a name")
            current = words[-1]
            stages[current] = (words[0], [])
            continue
        check(current is not None, f"{keyword} before the first FROM")
        if current is not None:
            stages[current][1].append((keyword, args))

    for name, default in BASE_ARGS.items():
        check(global_args.get(name) == default,
              f"ARG {name} must default to the public name {default}, not {global_args.get(name)!r}")
    if not check("build" in stages, "no stage named build"):
        return report()
    check(stages["build"][0] == "${BUILD_IMAGE}", f"stage build is FROM {stages['build'][0]}, not ${{BUILD_IMAGE}}")
    for target, base in TARGETS.items():
        if check(target in stages, f"no target {target}"):
            check(stages[target][0] == base, f"target {target} is FROM {stages[target][0]}, not {base}")

    allowed = setup_packages() | EXTRA_PACKAGES
    check(len(allowed) > len(EXTRA_PACKAGES), "could not read the package list of scripts/setup.sh")
    for keyword, args in stages["build"][1]:
        if keyword == "RUN" and "apt-get install" in args:
            words = [w for w in shlex.split(args.split("apt-get install", 1)[1].split("&&")[0])
                     if not w.startswith("-")]
            extra = set(words) - allowed
            check(not extra, f"build stage installs {sorted(extra)}, which scripts/setup.sh does not")
        if keyword == "RUN":
            for root, binary in re.findall(r"stage-rootfs\.sh\s+(\S+)\s+build/(\S+)", args):
                directory, _, program = binary.rpartition("/")
                cmake = ROOT / directory / "CMakeLists.txt"
                check(cmake.exists() and program in cmake.read_text(),
                      f"stage-rootfs.sh {root}: {directory}/CMakeLists.txt builds no {program}")
                check(any(f"--from=build {root}/" in a for k, (_, body) in stages.items()
                          for kw, a in body if kw == "COPY"), f"{root} is staged but no target copies it")

    for name, (_, body) in stages.items():
        for keyword, args in body:
            if keyword not in ("COPY", "ADD"):
                continue
            check(keyword == "COPY", f"{name}: use COPY, not ADD")
            words = shlex.split(args)
            if any(w.startswith("--from=") for w in words):
                continue
            for source in [w for w in words if not w.startswith("--")][:-1]:
                check((ROOT / source).exists(), f"{name}: COPY source {source} does not exist in the repository")

    for target in TARGETS:
        body = stages.get(target, (None, []))[1]
        users = [args for keyword, args in body if keyword == "USER"]
        if check(users, f"{target}: sets no USER (it would run as root)"):
            uid = users[-1].split(":")[0]
            check(uid.isdigit() and int(uid) != 0,
                  f"{target}: USER {users[-1]} must be a numeric non-root uid (runAsNonRoot needs a number)")
        starts = [(k, a) for k, a in body if k in ("ENTRYPOINT", "CMD")]
        if check(starts, f"{target}: no ENTRYPOINT or CMD"):
            check(starts[-1][1].startswith("["), f"{target}: {starts[-1][0]} must be exec form (no shell)")

    for readme in READMES:
        named = set(re.findall(r"-f deploy/docker/Dockerfile\s+--target\s+(\w+)", readme.read_text()))
        check(named == set(TARGETS), f"{readme.relative_to(ROOT)}: its build commands name targets "
                                     f"{sorted(named)}, not {sorted(TARGETS)}")
    return report()


def report():
    print(f"{'ok  ' if not failures else 'FAIL'} deploy/docker/Dockerfile")
    for f in failures:
        print("  -", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
