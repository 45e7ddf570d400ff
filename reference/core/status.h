// Errors as values: Status and StatusOr<T>, used at every boundary where bad
// input (a malformed model, a wrong shape, a missing file) can arrive. A
// message names the model, node and value it is about; callers add context
// with Status::WithContext as the error travels outward.
#pragma once

#include <cassert>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace parity {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input to an operator or a command
  kInvalidModel,        // the model breaks a rule of the IR or of an operator
  kNotFound,            // a file, value or operator that does not exist
  kUnimplemented,       // valid, but the reference has no kernel for it
  kOutOfRange,          // an index or a count beyond its bounds
  kResourceExhausted,   // a size over the configured memory limit
  kIoError,             // reading or writing a file failed
  kDeadlineExceeded,    // a run took longer than its time limit
  kUnavailable,         // the other end of a pipe or a worker is gone
  kInternal,            // a bug in ONNX Parity itself
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "context: message", so the outermost caller's words come first.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : state_(std::move(status)) { assert(!std::get<Status>(state_).ok()); }
  StatusOr(T value) : state_(std::move(value)) {}

  bool ok() const { return std::holds_alternative<T>(state_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(state_); }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> state_;
};

namespace internal {
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace internal

using internal::StrCat;

template <typename... Args>
Status InvalidArgument(const Args&... args) { return Status(StatusCode::kInvalidArgument, StrCat(args...)); }
template <typename... Args>
Status InvalidModel(const Args&... args) { return Status(StatusCode::kInvalidModel, StrCat(args...)); }
template <typename... Args>
Status NotFound(const Args&... args) { return Status(StatusCode::kNotFound, StrCat(args...)); }
template <typename... Args>
Status Unimplemented(const Args&... args) { return Status(StatusCode::kUnimplemented, StrCat(args...)); }
template <typename... Args>
Status OutOfRange(const Args&... args) { return Status(StatusCode::kOutOfRange, StrCat(args...)); }
template <typename... Args>
Status ResourceExhausted(const Args&... args) { return Status(StatusCode::kResourceExhausted, StrCat(args...)); }
template <typename... Args>
Status IoError(const Args&... args) { return Status(StatusCode::kIoError, StrCat(args...)); }
template <typename... Args>
Status DeadlineExceeded(const Args&... args) { return Status(StatusCode::kDeadlineExceeded, StrCat(args...)); }
template <typename... Args>
Status Internal(const Args&... args) { return Status(StatusCode::kInternal, StrCat(args...)); }

}  // namespace parity

#define PARITY_CONCAT_INNER(a, b) a##b
#define PARITY_CONCAT(a, b) PARITY_CONCAT_INNER(a, b)

#define PARITY_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::parity::Status parity_status_ = (expr);         \
    if (!parity_status_.ok()) return parity_status_;  \
  } while (0)

#define PARITY_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

#define PARITY_ASSIGN_OR_RETURN(lhs, expr) \
  PARITY_ASSIGN_OR_RETURN_IMPL(PARITY_CONCAT(parity_statusor_, __LINE__), lhs, expr)
