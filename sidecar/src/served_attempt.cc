#include "served_attempt.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

namespace sidecar {
namespace {

// A state file is a few bytes; more is not ours.
constexpr size_t kMaxFileBytes = 64;

std::string PathOf(const std::string& dir) { return dir + "/" + kServedAttemptFile; }

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

ServedAttemptFile Unusable(std::string error) {
  ServedAttemptFile file;
  file.error = std::move(error);
  return file;
}

ServedAttemptFile Ignored(std::string problem) {
  ServedAttemptFile file;
  file.problem = std::move(problem);
  return file;
}

}  // namespace

std::optional<int64_t> ParseServedAttempt(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

int64_t LastServedAttempt(std::optional<int64_t> state_file, int64_t env_attempt) {
  return state_file ? *state_file : env_attempt - 1;
}

ServedAttemptDecision DecideServedAttempt(std::optional<int64_t> state_file, int64_t env_attempt,
                                          int64_t configmap_attempt) {
  if (!state_file && configmap_attempt > env_attempt) return {.restart = true, .attempt = env_attempt};
  if (configmap_attempt > LastServedAttempt(state_file, env_attempt)) return {.serve = true, .attempt = configmap_attempt};
  return {};
}

std::optional<int64_t> AttemptEnteredAtStart(std::optional<int64_t> state_file, int64_t env_attempt) {
  if (state_file) return std::nullopt;
  return env_attempt;
}

bool AttemptOver(int64_t served, int64_t configmap_attempt) { return configmap_attempt > served; }

ServedAttemptFile ReadServedAttempt(const std::string& dir) {
  struct stat info{};
  if (stat(dir.c_str(), &info) != 0) return Unusable(Errno(dir));
  if (!S_ISDIR(info.st_mode)) return Unusable(dir + " is not a directory");
  int fd = open(PathOf(dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return {};
    return Ignored(Errno("cannot read " + PathOf(dir)));
  }
  std::string text(kMaxFileBytes + 1, '\0');
  ssize_t got = read(fd, text.data(), text.size());
  close(fd);
  if (got < 0) return Ignored(Errno("cannot read " + PathOf(dir)));
  text.resize(static_cast<size_t>(got));
  std::optional<int64_t> attempt = text.size() <= kMaxFileBytes ? ParseServedAttempt(text) : std::nullopt;
  if (!attempt) return Ignored(PathOf(dir) + " does not hold an attempt number");
  ServedAttemptFile file;
  file.attempt = attempt;
  return file;
}

std::string WriteServedAttempt(const std::string& dir, int64_t attempt) {
  const std::string path = PathOf(dir);
  const std::string tmp = path + ".tmp";
  const std::string text = std::to_string(attempt) + "\n";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create " + tmp);
  ssize_t wrote = write(fd, text.data(), text.size());
  if (wrote != static_cast<ssize_t>(text.size())) {
    std::string error = wrote < 0 ? Errno("cannot write " + tmp) : "cannot write " + tmp + ": short write";
    close(fd);
    return error;
  }
  if (close(fd) != 0) return Errno("cannot write " + tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Errno("cannot rename " + tmp + " to " + path);
  return "";
}

}  // namespace sidecar
