"""A Python trainer for the GPU tests (tests/gpu/python-gpu-tests.sh): the nccl_k8s package with a
framework somebody else wrote, through a real sidecar.

  python_trainer.py cupy    nccl_k8s.cupy_comms.communicators(): the root makes the id with
                            cupy.cuda.nccl.get_unique_id and posts it, the others fetch it; one
                            NcclCommunicator per local GPU; an allReduce of rank+1 checked.
  python_trainer.py torch   nccl_k8s.pytorch.init_process_group("nccl"): MASTER_ADDR = the root's
                            pod IP from this attempt's id, NCCL_SOCKET_IFNAME chosen by the package;
                            an all_reduce of rank+1 on the GPU checked.

Prints one result line the script reads:
  <mode> rank R of W: sum S (expected E), NCCL_SOCKET_IFNAME I, time to communicator T s
or, when the package raises, "<mode> error after T s: <ExceptionClass>: <message>" (T from the
call into the package) and exits 3.
Exit 0 when the sum is right, 1 when it is not.
"""

import logging
import os
import sys
import time


def run_cupy() -> int:
    import cupy
    from cupy.cuda import nccl

    import nccl_k8s
    from nccl_k8s import cupy_comms

    env = nccl_k8s.read_job_env()
    started = time.monotonic()
    try:
        comms = cupy_comms.communicators(env)
    except nccl_k8s.NcclK8sError as err:
        print(f"cupy error after {time.monotonic() - started:.2f} s: {type(err).__name__}: {err}", flush=True)
        return 3
    ready = time.monotonic() - started
    sums = []
    for g, comm in enumerate(comms):
        with cupy.cuda.Device(g):
            rank = env.first_rank + g
            buf = cupy.full(1 << 20, float(rank + 1), dtype=cupy.float32)
            comm.allReduce(buf.data.ptr, buf.data.ptr, buf.size, nccl.NCCL_FLOAT32, nccl.NCCL_SUM,
                           cupy.cuda.Stream.null.ptr)
            cupy.cuda.Stream.null.synchronize()
            sums.append((rank, float(buf.min()), float(buf.max())))
    world = env.world_size
    expected = world * (world + 1) / 2
    ok = all(low == expected and high == expected for _, low, high in sums)
    for rank, low, _ in sums:
        print(f"cupy rank {rank} of {world}: sum {low:g} (expected {expected:g}), NCCL_SOCKET_IFNAME "
              f"{os.environ.get('NCCL_SOCKET_IFNAME', '')}, time to communicator {ready:.2f} s", flush=True)
    for comm in comms:
        comm.destroy()
    return 0 if ok else 1


def run_torch() -> int:
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    import nccl_k8s
    import nccl_k8s.pytorch

    env = nccl_k8s.read_job_env()
    torch.cuda.set_device(0)  # one process per pod; CUDA_VISIBLE_DEVICES names its GPU
    started = time.monotonic()
    nccl_k8s.pytorch.init_process_group("nccl", timeout=timedelta(seconds=60),
                                        device_id=torch.device("cuda", 0))
    rank, world = dist.get_rank(), dist.get_world_size()
    total = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(total)
    torch.cuda.synchronize()
    ready = time.monotonic() - started
    expected = world * (world + 1) / 2
    ok = bool((total == expected).all().item())
    print(f"torch rank {rank} of {world}: sum {total[0].item():g} (expected {expected:g}), NCCL_SOCKET_IFNAME "
          f"{os.environ.get('NCCL_SOCKET_IFNAME', '')}, MASTER_ADDR {os.environ.get('MASTER_ADDR')}, "
          f"backend {dist.get_backend()}, time to communicator {ready:.2f} s", flush=True)
    dist.destroy_process_group()
    return 0 if ok else 1


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("cupy", "torch"):
        print("usage: python_trainer.py cupy|torch", file=sys.stderr)
        return 2
    import nccl_k8s

    started = time.monotonic()
    try:
        return run_cupy() if mode == "cupy" else run_torch()
    except nccl_k8s.NcclK8sError as err:
        print(f"{mode} error after {time.monotonic() - started:.2f} s: {type(err).__name__}: {err}", flush=True)
        return 3


if __name__ == "__main__":
    sys.exit(main())
