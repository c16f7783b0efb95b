/* Uses the installed C API, as a ctypes or C user would. */
#include <nccl_k8s/nccl_k8s.h>
#include <stdio.h>

int main(void) {
  nccl_k8s_comms_t* comms = NULL;
  int rc = nccl_k8s_init(NULL, 0, 0, &comms);
  printf("%d %s\n", rc, nccl_k8s_last_error());
  return rc == NCCL_K8S_INVALID_ENV ? 0 : 4;
}
