#!/usr/bin/env python3
"""Keeps the Markdown pages honest: each fact has one home and every link leads somewhere.

  - README.md is a front door: at most README_LIMIT bytes; the reference, the guides and the
    measured figures live on the pages it links.
  - The env table lives only in docs/contracts.md: every variable of contract/include/contract/env.h
    names a table row there (first cell), and no other page starts a table row with one.
  - No link leaves the repository: no scheme (http:, https:, ...), no relative path above its root.
  - Every relative link resolves to a file or folder, and an anchor into a Markdown page names
    one of its headings (GitHub's rule for heading ids).
  - No words about how the project is made (issue numbers, a ../shared folder, agents).

Usage: check_docs.py [REPO_ROOT]. Prints one line per problem (file:line: what) and exits 1 when
there is any.
"""
import os
import re
import sys
from pathlib import Path

README_LIMIT = 12 * 1024
ENV_HOME = Path("docs") / "contracts.md"
ENV_HEADER = Path("contract") / "include" / "contract" / "env.h"

# Words that talk about how the project is made, not about what it does.
INSIDER = [
    (re.compile(r"\bissue \d"), "an issue number"),
    (re.compile(r"\.\./shared\b"), "a path outside the repository (../shared)"),
    (re.compile(r"(?<!user )\bagents\b", re.IGNORECASE), "agents"),
    (re.compile(r"\bthe lead\b", re.IGNORECASE), "the lead"),
]

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*)>")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def markdown_files(root):
    """Every *.md under root, skipping hidden folders (.git, .deps) and build output."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith(".md"):
                yield Path(folder) / name


def prose_lines(text, keep_code_spans=False):
    """(line number, line) outside fenced code blocks; inline code spans blanked unless kept
    (a heading's code span is part of its id)."""
    fenced = None
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if fence:
            if fenced is None:
                fenced = fence.group(1)
            elif fence.group(1) == fenced:
                fenced = None
            continue
        if fenced is None:
            yield number, line if keep_code_spans else CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def heading_ids(text):
    """The ids GitHub gives a page's headings: lower case, punctuation dropped, spaces to
    hyphens; a repeated id gets -1, -2, ..."""
    ids, seen = set(), {}
    for _, line in prose_lines(text, keep_code_spans=True):
        match = HEADING.match(line)
        if not match:
            continue
        title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2))
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        ids.add(slug if count == 0 else f"{slug}-{count}")
    return ids


def link_targets(text):
    """(line number, target) of every inline, reference and auto link outside code."""
    for number, line in prose_lines(text):
        for match in INLINE_LINK.finditer(line):
            yield number, match.group(1)
        reference = REFERENCE_LINK.match(line)
        if reference:
            yield number, reference.group(1)
        for match in AUTOLINK.finditer(line):
            yield number, match.group(1)


def check_links(root, page, text, problems):
    where = page.relative_to(root)
    for number, target in link_targets(text):
        if not target:
            problems.append(f"{where}:{number}: empty link target")
            continue
        if SCHEME.match(target):
            problems.append(f"{where}:{number}: link leaves the repository: {target}")
            continue
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page.resolve()
        try:
            destination.relative_to(root.resolve())
        except ValueError:
            problems.append(f"{where}:{number}: link leads outside the repository: {target}")
            continue
        if not destination.exists():
            problems.append(f"{where}:{number}: link to a missing file: {target}")
            continue
        if anchor and destination.suffix == ".md":
            if anchor not in heading_ids(destination.read_text(encoding="utf-8")):
                problems.append(f"{where}:{number}: no heading #{anchor} in {destination.relative_to(root.resolve())}")


def env_names(root):
    header = (root / ENV_HEADER).read_text(encoding="utf-8")
    names = re.findall(r'inline constexpr char k\w+\[\]\s*=\s*"([A-Z0-9_]+)"', header)
    if not names:
        raise SystemExit(f"no env names found in {ENV_HEADER}")
    return names


ROW_NAMES = re.compile(r"^(?:`?[A-Z][A-Z0-9_]*`?(?:\s*(?:,|and|or)\s*|\s*$|\s+\())+")


def first_cell_names(line, names):
    """The env names a table row is about: an env table's row starts with the names (`NAME` or
    `A`, `B` | meaning). A first cell that starts with something else (a test's name) or sets a
    value (`NAME=1`) only mentions a variable."""
    first = line.strip().strip("|").split("|")[0].strip()
    listed = ROW_NAMES.match(first)
    if not listed:
        return []
    return [n for n in names if re.search(rf"(?<![A-Za-z0-9_]){n}(?![A-Za-z0-9_])", listed.group(0))]


def check_env_table(root, pages, problems):
    names = env_names(root)
    defined = set()
    for page, text in pages.items():
        relative = page.relative_to(root)
        for number, line in enumerate(text.splitlines(), 1):
            if not line.lstrip().startswith("|"):
                continue
            found = first_cell_names(line, names)
            if relative == ENV_HOME:
                defined.update(found)
            elif found:
                problems.append(f"{relative}:{number}: a table row for {', '.join(found)}: the env table "
                                f"lives only in {ENV_HOME} (link to it)")
    for name in names:
        if name not in defined:
            problems.append(f"{ENV_HOME}: no table row for {name} ({ENV_HEADER} declares it)")


def check_insider_words(root, page, text, problems):
    where = page.relative_to(root)
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, what in INSIDER:
            if pattern.search(line):
                problems.append(f"{where}:{number}: {what}: {line.strip()[:120]}")


def main(argv):
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parents[2]).resolve()
    pages = {page: page.read_text(encoding="utf-8") for page in markdown_files(root)}
    problems = []

    readme_size = (root / "README.md").stat().st_size
    if readme_size > README_LIMIT:
        problems.append(f"README.md: {readme_size} bytes, more than {README_LIMIT}: move the detail to the "
                        "page that is its home and link it")
    check_env_table(root, pages, problems)
    for page, text in pages.items():
        check_links(root, page, text, problems)
        check_insider_words(root, page, text, problems)

    for problem in problems:
        print(problem)
    print(f"{'ok' if not problems else 'FAIL'}: {len(pages)} pages, README.md {readme_size} bytes, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
