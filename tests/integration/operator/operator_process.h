// Runs nccl-operator as a real child process for the integration tests, with its log in a
// file the test can read (and print when an expectation fails).
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace optest {

class OperatorProcess {
 public:
  // `env`: NAME=VALUE entries added to the child's environment.
  OperatorProcess(std::vector<std::string> args, std::string log_path, std::vector<std::string> env = {})
      : log_path_(std::move(log_path)) {
    pid_ = fork();
    if (pid_ == 0) {
      for (std::string& e : env) putenv(e.data());
      FILE* log = std::fopen(log_path_.c_str(), "a");
      if (log) {
        dup2(fileno(log), 1);
        dup2(fileno(log), 2);
      }
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~OperatorProcess() { Kill(SIGKILL); }
  OperatorProcess(const OperatorProcess&) = delete;
  OperatorProcess& operator=(const OperatorProcess&) = delete;

  // Sends `sig` and reaps; returns the exit code (or 128+signal).
  int Kill(int sig) {
    if (pid_ <= 0) return exit_code_;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }
  // SIGSTOP and SIGCONT: while paused, what happens in the cluster reaches the operator only as
  // its watch events, all at once when it resumes.
  void Pause() const {
    if (pid_ > 0) kill(pid_, SIGSTOP);
  }
  void Resume() const {
    if (pid_ > 0) kill(pid_, SIGCONT);
  }
  bool Running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
  // Waits up to `timeout` for the process to end by itself; its exit code (128+signal), or -1
  // when it still runs.
  int WaitForExit(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return exit_code_;
  }
  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

}  // namespace optest
