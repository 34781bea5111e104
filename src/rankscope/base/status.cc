#include "rankscope/base/status.h"

namespace rankscope {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kIoError: return "I/O error";
    case StatusCode::kDataLoss: return "corrupt input";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kNotATrace: return "not a trace";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return message_;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, fmt::format("{}: {}", context, message_));
}

}  // namespace rankscope
