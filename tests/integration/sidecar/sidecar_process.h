// Runs the real nccl-sidecar binary as a child process for integration tests: its own env
// (only what is given, as in a pod), JSON logs to a file, ports chosen by the kernel and read
// back from its "started" log line, SIGTERM to stop.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace sidecar_it {

using Env = std::map<std::string, std::string>;

class SidecarProcess {
 public:
  SidecarProcess(const std::string& binary, const Env& env, std::vector<std::string> args,
                 const std::string& log_path)
      : log_path_(log_path) {
    args.insert(args.begin(), {"--listen", "127.0.0.1:0", "--probe-listen", "127.0.0.1:0", "--log-format", "json"});
    std::vector<std::string> env_lines;
    for (const auto& [k, v] : env) env_lines.push_back(k + "=" + v);
    // Emptied here, before the child exists, so WaitStarted never reads a previous run's ports.
    { std::ofstream truncate(log_path, std::ios::trunc); }
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_path.c_str(), O_WRONLY | O_APPEND);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv{const_cast<char*>(binary.c_str())};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      std::vector<char*> envp;
      for (auto& e : env_lines) envp.push_back(e.data());
      envp.push_back(nullptr);
      execve(binary.c_str(), argv.data(), envp.data());
      _exit(127);
    }
  }

  ~SidecarProcess() {
    if (pid_ > 0 && !exit_status_) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }

  // Waits for the "started" line; false if the process exited or the deadline passed.
  bool WaitStarted(std::chrono::seconds timeout = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      for (const nlohmann::json& line : LogLines()) {
        if (line.value("msg", "") != "started") continue;
        api_port_ = PortOf(line.value("listen", ""));
        probe_port_ = PortOf(line.value("probe_listen", ""));
        return api_port_ > 0 && probe_port_ > 0;
      }
      if (Exited()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // The first log line whose "msg" is `msg`, waited for; nullopt if the process exited or the
  // deadline passed first.
  std::optional<nlohmann::json> WaitLogged(const std::string& msg, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      for (nlohmann::json& line : LogLines()) {
        if (line.value("msg", "") == msg) return std::move(line);
      }
      if (Exited()) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

  // Waits for the process to end by itself: its exit code, or -1 when it still runs at the deadline.
  int WaitExit(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!Exited() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!exit_status_) return -1;
    return WIFEXITED(*exit_status_) ? WEXITSTATUS(*exit_status_) : 128 + WTERMSIG(*exit_status_);
  }

  // SIGTERM, then the exit code (or -1 when it did not stop within the timeout).
  int Terminate(std::chrono::seconds timeout = std::chrono::seconds(10)) {
    if (!exit_status_) kill(pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!Exited() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!exit_status_) return -1;
    return WIFEXITED(*exit_status_) ? WEXITSTATUS(*exit_status_) : 128 + WTERMSIG(*exit_status_);
  }

  // SIGKILL (as a crash or the OOM killer would) and reap it.
  void Kill() {
    if (Exited()) return;
    kill(pid_, SIGKILL);
    int status = 0;
    if (waitpid(pid_, &status, 0) == pid_) exit_status_ = status;
  }

  bool Exited() {
    if (exit_status_) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) exit_status_ = status;
    return exit_status_.has_value();
  }

  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  std::vector<nlohmann::json> LogLines() const {
    std::vector<nlohmann::json> lines;
    std::istringstream in(Log());
    for (std::string line; std::getline(in, line);) {
      nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
      if (!parsed.is_discarded()) lines.push_back(std::move(parsed));
    }
    return lines;
  }

  int api_port() const { return api_port_; }
  int probe_port() const { return probe_port_; }
  std::string api_url() const { return "http://127.0.0.1:" + std::to_string(api_port_); }

  // The port of a HOST:PORT the log names.
  static int PortOf(const std::string& host_port) {
    size_t colon = host_port.rfind(':');
    return colon == std::string::npos ? -1 : std::atoi(host_port.c_str() + colon + 1);
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  int api_port_ = -1;
  int probe_port_ = -1;
};

}  // namespace sidecar_it
