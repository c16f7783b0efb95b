#!/usr/bin/env python3
"""Adds up chaos.py runs from their logs: reads the per-run lines ("run N KIND injected ...") of
every LOG given (whole runs, interrupted ones and ones ended by an error alike) and prints
chaos.py's table per fault kind over all of them, so counts from several sessions or machines
can be put together.

  tests/chaos/tally.py LOG [LOG ...]"""
import re
import sys

from chaos import percentile

LINE = re.compile(r"^run\s+\d+\s+(?P<kind>\S+)\s+injected (?P<injected>\d+) converge\s+(?P<converge>-|[\d.]+) s "
                  r"attempts (?P<attempts>\[[^\]]*\]) states \[[^\]]*\] (?P<verdict>OK|VIOLATED)(?P<rest>.*)$")


def parse(path):
    runs = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if not m:
                continue
            rest = m["rest"]
            missed = rest.split(" missed: ", 1)[1].split("; ") if " missed: " in rest else []
            attempts = [int(a) for a in re.findall(r"\d+", m["attempts"])]
            runs.append({"kind": m["kind"], "injected": int(m["injected"]), "missed": len(missed),
                         "converge": None if m["converge"] == "-" else float(m["converge"]),
                         "jobs": len(attempts), "restarted": sum(1 for a in attempts if a > 1),
                         "violated": m["verdict"] == "VIOLATED"})
    return runs


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    runs = [r for p in paths for r in parse(p)]
    kinds = list(dict.fromkeys(r["kind"] for r in runs))
    print(f"{len(runs)} runs from {len(paths)} log(s)")
    print(f"{'kind':15s} {'runs':>5s} {'faults':>6s} {'missed':>6s} {'violated':>8s} {'jobs restarted':>15s} "
          f"{'p50 s':>6s} {'p99 s':>6s} {'max s':>6s}")
    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    for kind in kinds + ["all"]:
        rs = [r for r in runs if kind in ("all", r["kind"])]
        conv = [r["converge"] for r in rs if r["converge"] is not None]
        restarted = f"{sum(r['restarted'] for r in rs):>7d} of {sum(r['jobs'] for r in rs):<5d}"
        print(f"{kind:15s} {len(rs):5d} {sum(r['injected'] for r in rs):6d} {sum(r['missed'] for r in rs):6d} "
              f"{sum(r['violated'] for r in rs):8d} {restarted if kind != 'all' else '':>15s} "
              f"{fmt(percentile(conv, 50)) if kind != 'all' else '':>6s} "
              f"{fmt(percentile(conv, 99)) if kind != 'all' else '':>6s} "
              f"{fmt(max(conv) if conv else None) if kind != 'all' else '':>6s}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
