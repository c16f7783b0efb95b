"""The same 128 bytes through a PyTorch TCPStore rendezvous: the root sets key "id", N clients
wait in store.get("id"). Prints one latency (microseconds, sorted) per client, then "failures F".

  python tcpstore_spread.py N [--settle-ms MS]

The N clients are threads of this one process, each with its own TCPStore connection (1000
Python+torch processes do not fit the machine); get() releases the GIL while it waits.
"""
import os
import sys
import threading
import time
from datetime import timedelta

import torch.distributed as dist


def main() -> int:
    n = int(sys.argv[1])
    settle_ms = int(sys.argv[sys.argv.index("--settle-ms") + 1]) if "--settle-ms" in sys.argv else 1000
    timeout = timedelta(seconds=60)
    master = dist.TCPStore("127.0.0.1", 0, world_size=None, is_master=True, timeout=timeout,
                           wait_for_workers=False)
    port = master.port
    payload = os.urandom(128)
    done = [None] * n
    got = [None] * n
    clients = [dist.TCPStore("127.0.0.1", port, world_size=None, is_master=False, timeout=timeout)
               for _ in range(n)]

    def wait(i: int) -> None:
        value = clients[i].get("id")
        done[i] = time.perf_counter()
        got[i] = value

    threads = [threading.Thread(target=wait, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    time.sleep(settle_ms / 1000)  # every client is blocked in get() by now
    t0 = time.perf_counter()
    master.set("id", payload)
    for t in threads:
        t.join()
    micros = sorted(int((d - t0) * 1e6) for d, g in zip(done, got) if d is not None and g == payload)
    for m in micros:
        print(m)
    print(f"failures {n - len(micros)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
