#include "serving_thread.h"

namespace sidecar {

void ServingThread::Start() {
  thread_ = std::thread([this] {
    server_.listen_after_bind();
    finished_ = true;
  });
}

void ServingThread::Stop() {
  if (!thread_.joinable()) return;
  // The loop marks itself running at once; this wait is only ever a few instructions long.
  while (!server_.is_running() && !finished_.load()) std::this_thread::yield();
  server_.stop();
  thread_.join();
}

}  // namespace sidecar
