// Status and Result<T>: how pagereel code reports failure without exceptions.
//
// A Status is either OK or an error code plus a message written for the person who will
// read it (it names the bad input or the failing call and, where there is one, what to do).
// Result<T> holds either a value or a non-OK Status. Both are cheap to move and may be
// passed between threads; a single object is not safe to mutate from two threads at once.
#ifndef PAGEREEL_BASE_STATUS_H_
#define PAGEREEL_BASE_STATUS_H_

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace pagereel {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // The user asked for something that cannot be done (bad flag, bad file).
  kNotFound,          // A file, binary, target or key that should exist does not.
  kFailedPrecondition,
  kUnavailable,       // A peer (the browser, a pipe) went away; often worth a retry.
  kDeadlineExceeded,  // Waited as long as allowed.
  kCancelled,         // Stopped on purpose (Ctrl-C, client left).
  kResourceExhausted, // Disk full, out of memory, queue full.
  kIoError,
  kInternal,          // A bug in pagereel, or something the peer should never have sent.
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  std::string_view message() const { return rep_ ? std::string_view(rep_->message) : ""; }

  // "invalid argument: <message>", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

  // Marks an error that was looked at and deliberately dropped.
  void IgnoreError() const {}

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;  // Null when OK; shared so copies are cheap.
};

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status FailedPreconditionError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status CancelledError(std::string message);
Status ResourceExhaustedError(std::string message);
Status IoError(std::string message);
Status InternalError(std::string message);

// errno as a Status: "<context>: <strerror>", mapped to a fitting code (ENOSPC is
// kResourceExhausted, ENOENT kNotFound, ...).
Status ErrnoError(std::string_view context, int errno_value);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design.
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design.
    assert(!status_.ok() && "Result needs a value or an error");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace pagereel

#define PR_CONCAT_INNER_(a, b) a##b
#define PR_CONCAT_(a, b) PR_CONCAT_INNER_(a, b)

// Returns from the current function when `expr` (a Status) is an error.
#define PR_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::pagereel::Status pr_status_ = (expr);       \
    if (!pr_status_.ok()) return pr_status_;      \
  } while (false)

// PR_ASSIGN_OR_RETURN(auto x, ComputeX()): declares x from a Result or returns its error.
#define PR_ASSIGN_OR_RETURN(lhs, expr) \
  PR_ASSIGN_OR_RETURN_IMPL_(PR_CONCAT_(pr_result_, __LINE__), lhs, expr)
#define PR_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                              \
  if (!result.ok()) return result.status();          \
  lhs = std::move(result).value()

#endif  // PAGEREEL_BASE_STATUS_H_
