// Status and StatusOr: how every fallible engine function reports failure.
//
// The engine's public API never throws. A function that can fail returns Status (no value) or
// StatusOr<T>; the message is written for the user ("file X, byte 123: expected ',' ..."), so a
// caller can print it unchanged.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace rankscope {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the user asked for something impossible (bad flag value, bad pattern)
  kNotFound,         // a file or directory that does not exist
  kIoError,          // the OS refused (permissions, read error)
  kDataLoss,         // the input is corrupt or truncated
  kOutOfRange,       // the input is well formed but beyond a limit we enforce
  kFailedPrecondition,  // inputs that are fine alone but conflict (two files with one rank)
  kNotATrace,         // valid input of another kind (a JSON file that is not a trace)
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Prefix the message with context, e.g. the file name: "trace.json: <message>".
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }

template <typename... Args>
Status MakeError(StatusCode code, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
Status InvalidArgument(fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(StatusCode::kInvalidArgument, format, std::forward<Args>(args)...);
}
template <typename... Args>
Status DataLoss(fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(StatusCode::kDataLoss, format, std::forward<Args>(args)...);
}
template <typename... Args>
Status IoError(fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(StatusCode::kIoError, format, std::forward<Args>(args)...);
}
template <typename... Args>
Status NotFound(fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(StatusCode::kNotFound, format, std::forward<Args>(args)...);
}
template <typename... Args>
Status OutOfRange(fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(StatusCode::kOutOfRange, format, std::forward<Args>(args)...);
}
template <typename... Args>
Status NotATrace(fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(StatusCode::kNotATrace, format, std::forward<Args>(args)...);
}
template <typename... Args>
Status FailedPrecondition(fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(StatusCode::kFailedPrecondition, format, std::forward<Args>(args)...);
}

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "StatusOr built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace rankscope

// Early-return helpers in the style of Abseil / Perfetto.
#define RANKSCOPE_RETURN_IF_ERROR(expr)              \
  do {                                               \
    ::rankscope::Status rankscope_status_ = (expr);  \
    if (!rankscope_status_.ok()) return rankscope_status_; \
  } while (0)

#define RANKSCOPE_CONCAT_INNER(a, b) a##b
#define RANKSCOPE_CONCAT(a, b) RANKSCOPE_CONCAT_INNER(a, b)
#define RANKSCOPE_ASSIGN_OR_RETURN(lhs, expr) \
  RANKSCOPE_ASSIGN_OR_RETURN_IMPL(RANKSCOPE_CONCAT(rankscope_or_, __LINE__), lhs, expr)
#define RANKSCOPE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()
