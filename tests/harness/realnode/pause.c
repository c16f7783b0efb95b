// The pod sandbox's process for the real node (tests/harness/realnode): holds the pod's namespaces,
// reaps orphans re-parented to it, exits 0 on SIGINT/SIGTERM. Built static, so its image holds
// one file; the node imports it instead of pulling a pause image from a registry.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void Stop(int sig) {
  (void)sig;
  _exit(0);
}

static void Reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {.sa_handler = Stop};
  struct sigaction reap = {.sa_handler = Reap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &stop, NULL);
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGCHLD, &reap, NULL);
  for (;;) pause();
}
