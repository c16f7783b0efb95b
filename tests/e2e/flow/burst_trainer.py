"""A trainer that reports progress as fast as it can for a while (flow.progress's burst job).

  burst_trainer.py SECONDS

On pod 0 (NCCLJOB_INDEX) each report is one UDP datagram to its sidecar (nccl_k8s.report_progress);
it prints how many it sent, then says it is done and exits 0. The other pods wait as long without
reporting (a small machine runs every pod).
"""
import os
import sys
import time

import nccl_k8s


def main() -> int:
    seconds = float(sys.argv[1])
    if os.environ.get("NCCLJOB_INDEX") != "0":
        time.sleep(seconds)
        return 0
    end = time.monotonic() + seconds
    step = 0
    while time.monotonic() < end:
        step += 1
        nccl_k8s.report_progress(step, loss=1.0 / step)
    nccl_k8s.report_progress_done()
    print(f"reported {step} steps", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
