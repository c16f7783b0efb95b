"""``python -m nccl_k8s.torchrun [torchrun options] SCRIPT [ARGS]``: torchrun for an NcclJob pod.

Runs ``torch.distributed.run`` (torchrun) with ``--nnodes $NNODES --node-rank $NODE_RANK
--nproc-per-node $LOCAL_WORLD_SIZE`` from the operator's env and ``--master-addr`` set to the
root pod's IP from this attempt's id (nccl_k8s.pytorch.master_address; no DNS wait), plus
GLOO_SOCKET_IFNAME as nccl_k8s.pytorch chooses it. Options you pass come after ours, so yours
win. Exit status: torchrun's; 1 with a message when the env or the id exchange fails.
"""

from __future__ import annotations

import os
import sys
from typing import List, Mapping, Optional

from .errors import InvalidEnvError, NcclK8sError
from .job_env import read_job_env
from .pytorch import gloo_socket_ifname, master_address


def torchrun_args(environ: Mapping[str, str], master: Mapping[str, str]) -> List[str]:
    """torchrun's node options from the operator's env (NNODES, NODE_RANK, LOCAL_WORLD_SIZE) and
    ``master`` (MASTER_ADDR, MASTER_PORT)."""
    missing = [name for name in ("NNODES", "NODE_RANK", "LOCAL_WORLD_SIZE") if not environ.get(name)]
    if missing:
        raise InvalidEnvError(", ".join(missing) + " not set; the NcclJob operator injects them (docs/contracts.md)")
    return [f"--nnodes={environ['NNODES']}", f"--node-rank={environ['NODE_RANK']}",
            f"--nproc-per-node={environ['LOCAL_WORLD_SIZE']}", f"--master-addr={master['MASTER_ADDR']}",
            f"--master-port={master['MASTER_PORT']}"]


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    try:
        env = read_job_env()
        master = master_address(env)
        os.environ.update(gloo_socket_ifname(env))
        args = torchrun_args(os.environ, master)
    except NcclK8sError as err:
        print(f"nccl_k8s.torchrun: {err}", file=sys.stderr)
        return 1
    command = [sys.executable, "-m", "torch.distributed.run", *args, *argv]
    sys.stdout.flush()
    os.execv(sys.executable, command)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
