#include "process_events.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace sidecar {

ProcessEvents::ProcessEvents() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal_fd_ = signalfd(-1, &stop_signals, SFD_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

ProcessEvents::~ProcessEvents() {
  if (signal_fd_ >= 0) close(signal_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

ProcessEvents::Event ProcessEvents::Wait() {
  for (;;) {
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return Event::kSigterm;  // cannot wait any more: stop as if told to
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info{};
      if (read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
        return info.ssi_signo == SIGINT ? Event::kSigint : Event::kSigterm;
      }
    }
    if (fds[1].revents & POLLIN) {
      uint64_t count = 0;
      if (read(wake_fd_, &count, sizeof(count)) == sizeof(count)) return Event::kWoken;
    }
  }
}

void ProcessEvents::Wake() {
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

}  // namespace sidecar
