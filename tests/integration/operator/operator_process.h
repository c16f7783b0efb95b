// Runs nccl-operator as a real child process for the integration tests, with its log in a
// file the test can read (and print when an expectation fails).
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace optest {

class OperatorProcess {
 public:
  OperatorProcess(std::vector<std::string> args, std::string log_path) : log_path_(std::move(log_path)) {
    pid_ = fork();
    if (pid_ == 0) {
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
  bool Running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
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
