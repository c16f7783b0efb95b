"""What chaos.py and soak.py share: the options that place a run (seed, testnode bridge, build and
state dirs) and its start-up (signals end it through its cleanup, root and the built binaries are
checked, the seed is chosen, the state dir wiped)."""
import os
import random
import shutil
import signal
import sys
from typing import NamedTuple

BINARIES = ("operator/nccl-operator", "sidecar/nccl-sidecar", "runtime/nccl-allreduce")


def add_run_options(ap, name, bridge_index):
    """--seed, --bridge-index (default `bridge_index`), --build, --work (default BUILD/<name>)."""
    ap.add_argument("--seed", type=int, default=None, help="random seed (printed when not given)")
    ap.add_argument("--bridge-index", type=int, default=bridge_index, choices=range(11, 16), metavar="11..15",
                    help=f"testnode bridge tnc<i>, pods on 10.246.<i>.0/24 (default {bridge_index}; one per concurrent run)")
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..", "build"))
    ap.add_argument("--work", default=None, help=f"state dir (default BUILD/{name}; wiped first)")


class Started(NamedTuple):
    build: str  # absolute
    seed: int
    rng: random.Random
    work: str  # absolute, empty


def start(args, name, what):
    """Exits 77 (skip) when not root, 2 when a binary is not built; `what` names the run in the skip line."""
    # SIGTERM and SIGINT (ignored in background jobs otherwise) end the run through its cleanup.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda number, _: sys.exit(128 + number))
    if os.geteuid() != 0:
        print(f"SKIP: {what} needs root (testnode's network namespaces)")
        sys.exit(77)
    build = os.path.abspath(args.build)
    for exe in BINARIES:
        if not os.access(f"{build}/{exe}", os.X_OK):
            print(f"{name}: {build}/{exe} is not built", file=sys.stderr)
            sys.exit(2)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    work = os.path.abspath(args.work or f"{build}/{name}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return Started(build, seed, random.Random(seed), work)
