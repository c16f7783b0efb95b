"""nccl_k8s: a trainer's side of an NcclJob, in Python (standard library only).

    import nccl_k8s
    env = nccl_k8s.read_job_env()                 # the operator's NCCLJOB_* env, checked
    uid = nccl_k8s.unique_id(create=cupy.cuda.nccl.get_unique_id)   # 128 bytes of this attempt
    attempt = nccl_k8s.served_attempt()           # the attempt served: the sidecar's, not NCCLJOB_ATTEMPT
    uids = nccl_k8s.unique_ids(create=...)        # one per bootstrap root (NCCLJOB_BOOTSTRAP_ROOTS)
    comms = nccl_k8s.cupy_comms.communicators()   # or: one NcclCommunicator per local GPU
    nccl_k8s.pytorch.init_process_group("gloo")   # or: PyTorch, MASTER_ADDR = root pod IP
    nccl_k8s.report_progress(step, total=steps, loss=loss)   # each step, to the sidecar (UDP)
    nccl_k8s.report_progress_done()               # stopped stepping on purpose

The same contract, rule and messages as the C++ runtime (runtime/): docs/contracts.md.
"""

from . import bootstrap_roots, cupy_comms, pytorch  # their frameworks are imported only when called
from .errors import (DeadlineExceededError, InvalidArgumentError, InvalidEnvError, NcclK8sError,
                     SidecarUnavailableError, StaleAttemptError)
from .exchange import served_attempt, unique_id, unique_ids
from .job_env import JobEnv, parse_job_env, read_job_env
from .net_probe import configure_socket_ifname, default_route_interface, list_interfaces
from .progress import report_progress, report_progress_done
from .socket_ifname import IfnameChoice, InterfaceAddress, choose_socket_ifname
from .unique_id import UNIQUE_ID_BYTES, BootstrapAddress, address_id, as_id_bytes, bootstrap_address

__version__ = "0.1.0"  # the release version (VERSION at the repository root; tests/version checks the copy)

__all__ = [
    "BootstrapAddress", "DeadlineExceededError", "IfnameChoice", "InterfaceAddress", "InvalidArgumentError",
    "InvalidEnvError", "JobEnv", "NcclK8sError", "SidecarUnavailableError", "StaleAttemptError",
    "UNIQUE_ID_BYTES", "address_id", "cupy_comms", "pytorch", "as_id_bytes", "bootstrap_address", "choose_socket_ifname",
    "configure_socket_ifname", "default_route_interface", "list_interfaces", "parse_job_env", "read_job_env",
    "bootstrap_roots", "report_progress", "report_progress_done", "served_attempt", "unique_id", "unique_ids",
]
