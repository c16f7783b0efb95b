// Errors are values: every call into the API server answers with a Status (or a Result<T>,
// a value or a Status). A Status built from an API response carries the server's
// metav1.Status fields, so callers branch on reason (IsNotFound, IsConflict, ...) instead of
// on HTTP codes or message text.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kube {

class Status {
 public:
  Status() = default;  // OK

  static Status Ok() { return Status(); }
  // The server answered with an HTTP error; body is its metav1.Status JSON (or anything else:
  // then reason falls back to the one the HTTP code implies and message to the body's head).
  static Status FromResponse(long http_code, std::string_view body);
  // No HTTP answer at all (connection refused, TLS failure, reset, timeout). Retryable.
  static Status Transport(std::string message);
  // An error found on this side (bad config, bad input, a stream we could not decode).
  // reason is a CamelCase word such as "InvalidConfig", "DecodeError", "Cancelled".
  static Status Local(std::string reason, std::string message);
  // An HTTP error with explicit fields (mostly for tests and ERROR watch events).
  static Status Http(long http_code, std::string reason, std::string message);

  bool ok() const { return !transport_ && code_ == 0 && reason_.empty(); }
  long code() const { return code_; }                   // HTTP code; 0 when none
  const std::string& reason() const { return reason_; }  // metav1.Status reason, e.g. "NotFound"
  const std::string& message() const { return message_; }
  const std::string& details_name() const { return details_name_; }
  const std::string& details_kind() const { return details_kind_; }
  bool transport_error() const { return transport_; }

  bool IsNotFound() const { return reason_ == "NotFound" || (code_ == 404 && reason_.empty()); }
  bool IsConflict() const { return reason_ == "Conflict" || (code_ == 409 && reason_ != "AlreadyExists"); }
  bool IsAlreadyExists() const { return reason_ == "AlreadyExists"; }
  // 410: a watch or list resourceVersion is too old ("Expired" or "Gone"); relist.
  bool IsGone() const { return code_ == 410 || reason_ == "Expired" || reason_ == "Gone"; }
  bool IsInvalid() const { return reason_ == "Invalid" || code_ == 422; }
  bool IsBadRequest() const { return reason_ == "BadRequest" || code_ == 400; }
  bool IsForbidden() const { return reason_ == "Forbidden" || code_ == 403; }
  bool IsUnauthorized() const { return reason_ == "Unauthorized" || code_ == 401; }
  bool IsTooManyRequests() const { return code_ == 429; }
  bool IsCancelled() const { return reason_ == "Cancelled"; }
  // Worth retrying the same request later: transport errors, 429 and 5xx.
  bool IsRetryable() const { return transport_ || code_ == 429 || code_ >= 500; }

  // "409 Conflict: Operation cannot be fulfilled on configmaps \"x\": ..." (for logs).
  std::string ToString() const;

  // Set by the client when the server sent Retry-After (seconds); 0 when absent.
  int retry_after_seconds() const { return retry_after_seconds_; }
  void set_retry_after_seconds(int s) { retry_after_seconds_ = s; }

 private:
  long code_ = 0;
  bool transport_ = false;
  int retry_after_seconds_ = 0;
  std::string reason_;
  std::string message_;
  std::string details_name_;
  std::string details_kind_;
};

// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit on purpose
  Result(Status status) : v_(std::move(status)) {}   // NOLINT: must not be OK

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kube
