#!/usr/bin/env python3
"""Holds every copy of the release version to the one source, the file VERSION at the repository
root. CMake reads VERSION itself (the programs' --version, the operator's build_info metric and
default sidecar image, the runtime's CMake package); what cannot read it keeps a copy, checked here:

  - VERSION: one line, MAJOR.MINOR.PATCH (CMake's project() takes nothing else);
  - CMakeLists.txt and runtime/CMakeLists.txt: project() takes the version read from VERSION;
  - charts/nccl-operator/Chart.yaml: version and appVersion (the images' default tag);
  - python/: nccl_k8s.__version__, and pyproject.toml takes it from there (dynamic);
  - deploy/docker/Dockerfile: the default of ARG VERSION (the images' version label);
  - the user's pages and files (every *.md, charts/, deploy/, python/): each image tag
    nccl-operator:X, nccl-sidecar:X, nccl-trainer:X, each app.kubernetes.io/version label and
    each "appVersion, X";
  - CHANGELOG.md: a section for VERSION, or an Unreleased one.

Usage: check_version.py [REPO_ROOT]. One line per copy that differs (file:line: what), exit 1
when there is any. To release another version: edit VERSION, run this, fix what it names, then
deploy/render.sh.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
# A copy in a user's page or file: the version is group 1.
COPIES = [
    re.compile(r"\bnccl-(?:operator|sidecar|trainer):([0-9][0-9A-Za-z.+-]*[0-9A-Za-z])"),
    re.compile(r"app\.kubernetes\.io/version:\s*\"?([0-9][^\"\s]*)"),
    re.compile(r"appVersion, ([0-9][0-9A-Za-z.+-]*[0-9A-Za-z])"),
]

problems = []


def problem(path, line, what):
    problems.append(f"{path}:{line}: {what}")


def read(relative):
    return (ROOT / relative).read_text()


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def expect(relative, pattern, want, what):
    """The first match of `pattern` in the file has `want` as its group 1."""
    text = read(relative)
    match = re.search(pattern, text, re.M)
    if match is None:
        problem(relative, 1, f"{what}: not found (pattern {pattern!r})")
    elif match.group(1) != want:
        problem(relative, line_of(text, match.start()), f"{what} is {match.group(1)!r}, not VERSION's {want!r}")


def tracked_files():
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return [Path(p) for p in listed.stdout.split("\0") if p]
    # Not a git checkout (an unpacked archive): every file under the root but build output.
    return [p.relative_to(ROOT) for p in ROOT.rglob("*")
            if p.is_file() and not any(part.startswith((".", "build")) for part in p.relative_to(ROOT).parts)]


def users_files():
    for path in tracked_files():
        if path.suffix == ".md" or path.parts[0] in ("charts", "deploy", "python"):
            if (ROOT / path).is_file():
                yield path


def main():
    lines = read("VERSION").splitlines()
    version = lines[0].strip() if lines else ""
    if len(lines) != 1 or not SEMVER.match(version):
        problem("VERSION", 1, f"must be one line MAJOR.MINOR.PATCH, got {read('VERSION')!r}")
        return report()

    for cmake in ("CMakeLists.txt", "runtime/CMakeLists.txt"):
        expect(cmake, r"^\s*project\(\S+ VERSION (\S+)", "${NCCLOP_VERSION}", "project()'s VERSION")
        expect(cmake, r"^\s*file\(STRINGS (\S+) NCCLOP_VERSION LIMIT_COUNT 1\)",
               "${CMAKE_CURRENT_SOURCE_DIR}/" + ("../" if cmake.startswith("runtime") else "") + "VERSION",
               "the file NCCLOP_VERSION is read from")
    chart = "charts/nccl-operator/Chart.yaml"
    expect(chart, r"^version:\s*\"?([^\"\s]+)", version, "the chart's version")
    expect(chart, r"^appVersion:\s*\"?([^\"\s]+)", version, "the chart's appVersion")
    expect("python/src/nccl_k8s/__init__.py", r"^__version__ = \"([^\"]*)\"", version, "nccl_k8s.__version__")
    expect("python/pyproject.toml", r"^version = \{attr = \"([^\"]*)\"\}", "nccl_k8s.__version__",
           "the package's dynamic version")
    expect("python/pyproject.toml", r"^dynamic = \[\"(version)\"\]", "version", "dynamic = [\"version\"]")
    expect("deploy/docker/Dockerfile", r"^ARG VERSION=(\S+)", version, "the default of ARG VERSION")
    changelog = read("CHANGELOG.md")
    newest = re.search(r"^## \[([^\]]+)\]", changelog, re.M)
    if newest is None or newest.group(1) not in ("Unreleased", version):
        problem("CHANGELOG.md", line_of(changelog, newest.start()) if newest else 1,
                f"the newest section must be [Unreleased] or [{version}], not {newest and newest.group(1)!r}")

    seen = 0
    for path in users_files():
        try:
            text = (ROOT / path).read_text()
        except UnicodeDecodeError:
            continue
        for pattern in COPIES:
            for match in pattern.finditer(text):
                seen += 1
                if match.group(1) != version:
                    problem(path, line_of(text, match.start()),
                            f"{match.group(0)!r}: the version is {version!r} (VERSION)")
    if seen < 10:
        problem("tests/version/check_version.py", 1, f"only {seen} copies found in the user's files: is the scan broken?")
    return report()


def report():
    for p in problems:
        print(p)
    print(f"{'ok  ' if not problems else 'FAIL'} every copy of the release version matches VERSION")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
