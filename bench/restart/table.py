#!/usr/bin/env python3
"""The tables of bench/restart/run.sh from its sample lines.

  table.py FILE...   each line: <strategy> <kubelet> <pods> <restart> <seconds>

Prints one row per strategy, kubelet setting, job size and restart (p50, p99, min, max), then
the p50s side by side per kubelet setting, size and restart with each one's ratio to Recreate's.
"""
import statistics
import sys

# The order of the side-by-side table's columns; strategies not named here follow by name.
STRATEGY_ORDER = ["InPlace", "JobSetInPlace", "Recreate"]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def read(paths):
    rows = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                strategy, kubelet, n, k, secs = line.split()
                rows.setdefault((strategy, kubelet, int(n), int(k)), []).append(float(secs))
    return rows


def order(strategies):
    known = [s for s in STRATEGY_ORDER if s in strategies]
    return known + sorted(s for s in strategies if s not in STRATEGY_ORDER)


def main(paths):
    rows = read(paths)
    if not rows:
        sys.exit("table.py: no samples in " + " ".join(paths))
    strategies = order({s for s, _, _, _ in rows})
    kubelets = sorted({kb for _, kb, _, _ in rows}, key=lambda kb: (kb != "default", kb))
    print("| strategy | kubelet | pods | restart | samples | p50 (s) | p99 (s) | min (s) | max (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for s in strategies:
        for kb in kubelets:
            for (s2, kb2, n, k), xs in sorted(rows.items(), key=lambda r: (r[0][2], r[0][3])):
                if (s2, kb2) != (s, kb):
                    continue
                print(f"| {s} | {kb} | {n} | {k} | {len(xs)} | {statistics.median(xs):.2f} | "
                      f"{pct(xs, 0.99):.2f} | {min(xs):.2f} | {max(xs):.2f} |")
    print()
    head = " | ".join(f"{s} p50 (s)" for s in strategies)
    ratios = [s for s in strategies if s != "Recreate"] if "Recreate" in strategies else []
    rhead = "".join(f" | {s} / Recreate" for s in ratios)
    print(f"| kubelet | pods | restart | {head}{rhead} |")
    print("| --- | --- | --- |" + " --- |" * (len(strategies) + len(ratios)))
    for kb in kubelets:
        for n, k in sorted({(n, k) for _, kb2, n, k in rows if kb2 == kb}):
            p50 = {s: statistics.median(rows[(s, kb, n, k)]) for s in strategies if (s, kb, n, k) in rows}
            cells = " | ".join(f"{p50[s]:.2f}" if s in p50 else "" for s in strategies)
            rcells = "".join(f" | {p50[s] / p50['Recreate']:.2f}" if s in p50 and "Recreate" in p50 else " | "
                             for s in ratios)
            print(f"| {kb} | {n} | {k} | {cells}{rcells} |")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 else 2)
    main(sys.argv[1:])
