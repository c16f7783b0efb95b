/* Uses the installed C API, as a ctypes or C user would. */
#include <nccl_k8s/nccl_k8s.h>
#include <stdio.h>

int main(void) {
  nccl_k8s_comms_t* comms = NULL;
  const char* names[] = {"loss"};
  const double values[] = {0.5};
  /* Without the env contract a progress report is a no-op that still answers 0. */
  if (nccl_k8s_report_progress(1, 10, names, values, 1) != 0 || nccl_k8s_report_progress_done() != 0) return 5;
  int rc = nccl_k8s_init(NULL, 0, 0, &comms);
  printf("%d %s\n", rc, nccl_k8s_last_error());
  return rc == NCCL_K8S_INVALID_ENV ? 0 : 4;
}
