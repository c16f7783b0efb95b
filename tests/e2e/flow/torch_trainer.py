"""A real PyTorch trainer for the end-to-end flow tests (scenarios torch, torch-kill, torchrun).

init_process_group(gloo) from the NcclJob's env through the nccl_k8s package (MASTER_ADDR = the
root pod's IP from this attempt's id), or, under `python -m nccl_k8s.torchrun`, from the env
torchrun gives each worker; then an all_reduce of rank+1 over all ranks, checked against
world*(world+1)/2. Prints one line the test reads:

  rank R of W, attempt A: all_reduce S (expected E), MASTER_ADDR M, init_process_group returned
  after T s (process start to return; import torch I s)

  torch_trainer.py [--linger-attempt-1 SECONDS] [--dns]
  --dns: use the operator's MASTER_ADDR (the root pod's DNS name) as it is, no id exchange.
Its steps go to the sidecar as progress reports (nccl_k8s.report_progress): step 1 the
all_reduce, then one a second while it lingers; done before it ends.
With FLOW_CONTRACT_REFS set, first prints "refs <its value>".
Exit 0 when the sum is right, 1 otherwise.
"""

import argparse
import logging
import os
import sys
import time
from datetime import timedelta


def process_start_epoch() -> float:
    """When this process started (from /proc), so the figure includes the interpreter's start."""
    with open("/proc/self/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat") as f:
        boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
    return boot + start_ticks / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--linger-attempt-1", type=float, default=0)
    parser.add_argument("--dns", action="store_true")
    args = parser.parse_args()
    # A variable of the template that refers to contract variables ($(MASTER_ADDR), ...), as the
    # kubelet expanded it: the job's come by envFrom, the pod's by env (docs/contracts.md).
    if "FLOW_CONTRACT_REFS" in os.environ:
        print(f"refs {os.environ['FLOW_CONTRACT_REFS']}", flush=True)
    started = process_start_epoch()
    # The package's lines (interface chosen, id received after N ms) go to the trainer's log.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import_begin = time.time()
    import torch
    import torch.distributed as dist

    import nccl_k8s
    import nccl_k8s.pytorch

    imported = time.time()
    if args.dns:
        dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=180))
    else:
        nccl_k8s.pytorch.init_process_group("gloo", timeout=timedelta(seconds=180))
    ready = time.time()
    rank, world = dist.get_rank(), dist.get_world_size()
    total = torch.tensor([float(rank + 1)])
    dist.all_reduce(total)
    expected = world * (world + 1) / 2
    # The attempt served, as the sidecar says: after a restart in place it is past NCCLJOB_ATTEMPT.
    attempt = str(nccl_k8s.served_attempt())
    print(f"rank {rank} of {world}, attempt {attempt}: all_reduce {total.item():g} (expected {expected:g}), "
          f"MASTER_ADDR {os.environ.get('MASTER_ADDR')}, init_process_group returned after "
          f"{ready - started:.2f} s (import torch {imported - import_begin:.2f} s)", flush=True)
    linger = args.linger_attempt_1 if attempt == "1" else 0.0
    steps = 1 + int(linger)
    nccl_k8s.report_progress(1, total=steps, all_reduce=total.item())
    lingered = time.monotonic()
    for step in range(2, steps + 1):  # "training": the test kills a rank meanwhile
        time.sleep(max(0.0, lingered + step - 1 - time.monotonic()))
        nccl_k8s.report_progress(step, total=steps)
    time.sleep(max(0.0, lingered + linger - time.monotonic()))
    nccl_k8s.report_progress_done()
    dist.destroy_process_group()
    return 0 if total.item() == expected else 1


if __name__ == "__main__":
    sys.exit(main())
