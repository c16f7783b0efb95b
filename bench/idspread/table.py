"""Prints the idspread table from a run's latency files (WORK/{sidecar,tcpstore,push}-N-R.us).

  python3 table.py WORK N [N ...]
"""
import glob
import sys


def summary(work: str, path: str, n: int):
    values, failures = [], 0
    for name in glob.glob(f"{work}/{path}-{n}-*.us"):
        for line in open(name):
            if line.startswith("failures"):
                failures += int(line.split()[1])
            elif line.strip():
                values.append(int(line) / 1000)
    values.sort()
    if not values:
        return None
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    return pick(0.5), pick(0.99), values[-1], failures


def main() -> None:
    work, sizes = sys.argv[1], [int(a) for a in sys.argv[2:]]
    header = ("N", "sidecars p50/p99/max ms", "TCPStore p50/p99/max ms", "root push p50/p99/max ms",
              "p50 sidecars/TCPStore", "p50 sidecars/push")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for n in sizes:
        cells, p50 = [str(n)], {}
        for path in ("sidecar", "tcpstore", "push"):
            s = summary(work, path, n)
            if s is None:
                cells.append("-")
                continue
            p50[path] = s[0]
            fail = f" ({s[3]} failed)" if s[3] else ""
            cells.append(f"{s[0]:.1f} / {s[1]:.1f} / {s[2]:.1f}{fail}")
        for other in ("tcpstore", "push"):
            ok = "sidecar" in p50 and p50.get(other)
            cells.append(f"{p50['sidecar'] / p50[other]:.2f}" if ok else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
