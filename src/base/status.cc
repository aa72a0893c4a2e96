#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace pagereel {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kDeadlineExceeded: return "deadline exceeded";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kIoError: return "I/O error";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) {
    rep_ = std::make_shared<const Rep>(Rep{code, std::move(message)});
  }
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code()));
  out += ": ";
  out += message();
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += this->message();
  return Status(code(), std::move(message));
}

Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
Status FailedPreconditionError(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
Status DeadlineExceededError(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
Status ResourceExhaustedError(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

Status ErrnoError(std::string_view context, int errno_value) {
  std::string message(context);
  message += ": ";
  message += std::strerror(errno_value);
  StatusCode code = StatusCode::kIoError;
  switch (errno_value) {
    case ENOENT: code = StatusCode::kNotFound; break;
    case ENOSPC:
    case EDQUOT:
    case ENOMEM:
    case EMFILE:
    case ENFILE: code = StatusCode::kResourceExhausted; break;
    case EACCES:
    case EPERM:
    case EROFS:
    case ENOTDIR:
    case EISDIR: code = StatusCode::kInvalidArgument; break;
    case EPIPE:
    case ECONNRESET: code = StatusCode::kUnavailable; break;
    case EINTR: code = StatusCode::kCancelled; break;
    default: break;
  }
  return Status(code, std::move(message));
}

}  // namespace pagereel
