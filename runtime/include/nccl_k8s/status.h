// Errors as values: every fallible call of the runtime returns a Status or a Result<T>.
// Messages are written for the person who reads the log: what went wrong and what to do.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace nccl_k8s {

enum class Code {
  kOk = 0,
  kInvalidEnv,        // the env contract is missing or malformed
  kUnavailable,       // the sidecar could not be reached or answered unexpectedly
  kDeadlineExceeded,  // the init deadline passed
  kStaleAttempt,      // the sidecar holds a later attempt: this pod is stale and must exit
  kNccl,              // NCCL returned an error
  kCuda,              // the CUDA runtime returned an error
  kNoGpu,             // no usable GPU in this process
  kInvalidArgument,
};

const char* CodeName(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design, like absl::StatusOr
  Result(Status status) : status_(std::move(status)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace nccl_k8s
