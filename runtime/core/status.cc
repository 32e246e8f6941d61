#include "tessera/status.h"

namespace tessera {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kInvalidFile: return "INVALID_FILE";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kOutOfMemory: return "OUT_OF_MEMORY";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kIoError: return "IO_ERROR";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
  }
  return "UNKNOWN";
}

std::string Status::to_string() const {
  if (is_ok()) return "OK";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace tessera
