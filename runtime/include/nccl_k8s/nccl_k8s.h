/* nccl-k8s runtime, C API: for frameworks in other languages and for Python's ctypes.
 *
 * Every function returns 0 on success and a non-zero nccl_k8s_code on failure; the message of
 * the last failure on the calling thread is nccl_k8s_last_error().
 *
 *   nccl_k8s_comms_t* comms = NULL;
 *   if (nccl_k8s_init(NULL, 0, 0, &comms) != 0) { fprintf(stderr, "%s\n", nccl_k8s_last_error()); exit(1); }
 *   ncclComm_t comm; int rank;
 *   nccl_k8s_comm(comms, 0, &comm, &rank);
 *   ...
 *   nccl_k8s_destroy(comms);
 */
#ifndef NCCL_K8S_NCCL_K8S_H_
#define NCCL_K8S_NCCL_K8S_H_

#include <stddef.h>
#include <stdint.h>

#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCL_K8S_ID_BYTES 128

enum nccl_k8s_code {
  NCCL_K8S_OK = 0,
  NCCL_K8S_INVALID_ENV = 1,
  NCCL_K8S_UNAVAILABLE = 2,
  NCCL_K8S_DEADLINE_EXCEEDED = 3,
  NCCL_K8S_STALE_ATTEMPT = 4,
  NCCL_K8S_NCCL_ERROR = 5,
  NCCL_K8S_CUDA_ERROR = 6,
  NCCL_K8S_NO_GPU = 7,
  NCCL_K8S_INVALID_ARGUMENT = 8
};

typedef struct nccl_k8s_comms nccl_k8s_comms_t;

/* The message of the calling thread's last failure ("" if none). Valid until its next call. */
const char* nccl_k8s_last_error(void);

/* Sets NCCL_SOCKET_IFNAME as the runtime would (no-op if the user set it). Call before any other
 * NCCL call of the process when you obtain the id elsewhere. */
int nccl_k8s_configure_socket_ifname(void);

/* The job's id for this pod's attempt: the root creates and posts it, others fetch it.
 * timeout_ms <= 0 uses NCCLJOB_INIT_TIMEOUT_SECONDS. */
int nccl_k8s_get_unique_id(unsigned char out[NCCL_K8S_ID_BYTES], long timeout_ms);

/* The ids of this pod's attempt, one per bootstrap root (NCCLJOB_BOOTSTRAP_ROOTS, default 1), back to
 * back in out (max_ids * NCCL_K8S_ID_BYTES bytes) in the order ncclCommInitRankScalable takes them;
 * *n_ids says how many. Root pods create and post theirs; nccl_k8s_get_unique_id refuses a job of
 * several roots. */
int nccl_k8s_get_unique_ids(unsigned char* out, int max_ids, int* n_ids, long timeout_ms);

/* Env, interface, id and this process's communicators under one deadline. devices may be NULL
 * (devices 0..n-1); otherwise n_devices must equal max(NCCLJOB_GPUS_PER_POD, 1). The
 * communicators are plain blocking NCCL communicators, built by NCCL's own init with its default
 * config; if that init is still running at the deadline, the process ends (exit status 124, the
 * cause on stderr) and the operator restarts the attempt. With NCCL_K8S_COMM_MODE=nonblocking in
 * the environment when this is called (from Python: os.environ before the call) they are NCCL
 * non-blocking communicators instead, aborted at the deadline (NCCL_K8S_DEADLINE_EXCEEDED);
 * nccl_k8s_is_blocking tells which. */
int nccl_k8s_init(const int* devices, int n_devices, long timeout_ms, nccl_k8s_comms_t** out);

int nccl_k8s_local_count(const nccl_k8s_comms_t* comms);
int nccl_k8s_world_size(const nccl_k8s_comms_t* comms);
/* 1 when the communicators are blocking (the default), 0 when non-blocking (NCCL_K8S_COMM_MODE=nonblocking). */
int nccl_k8s_is_blocking(const nccl_k8s_comms_t* comms);
int nccl_k8s_comm(const nccl_k8s_comms_t* comms, int local, ncclComm_t* comm, int* rank);

/* Non-blocking communicators may return ncclInProgress from any call; call this (or poll
 * ncclCommGetAsyncError) before the next NCCL call. On error or timeout all are aborted.
 * Blocking ones (the default): an error check. */
int nccl_k8s_wait_ready(nccl_k8s_comms_t* comms, long timeout_ms);

/* Finalizes and destroys every communicator and frees comms (also on failure). */
int nccl_k8s_destroy(nccl_k8s_comms_t* comms);
/* Aborts every communicator and frees comms. */
void nccl_k8s_abort(nccl_k8s_comms_t* comms);

/* Training progress for the pod's sidecar (docs/contracts.md, "Progress"; nccl_k8s/progress.h):
 * one UDP datagram, never blocking. Without the NcclJob env or a listening sidecar nothing is
 * sent and 0 is returned all the same. total < 0: unknown. count metrics as names[i] = values[i]
 * (names and values may be NULL when count is 0; at most 8 are sent). Returns 0, or
 * NCCL_K8S_INVALID_ARGUMENT (nothing sent) for a negative step or count, or NULL arrays. */
int nccl_k8s_report_progress(int64_t step, int64_t total, const char* const* names, const double* values, int count);
/* The last step reported again, marked done: the rank is no longer watched for a stall. Returns 0. */
int nccl_k8s_report_progress_done(void);

#ifdef __cplusplus
}
#endif

#endif /* NCCL_K8S_NCCL_K8S_H_ */
