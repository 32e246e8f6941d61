// Status and Result<T>: how runtime/ and backends/ report failures (no exceptions cross
// the C API). A Status is OK or carries a code and a message that names the culprit
// (file, node, tensor or flag).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace tessera {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // bad input from the caller: shape, dtype, missing input, bad flag
  kInvalidFile,       // a corrupt or hostile .tsr / .onnx file
  kNotFound,          // a named input, output or file does not exist
  kUnimplemented,     // an op, attribute or dtype Tessera does not support yet
  kOutOfMemory,       // an allocation failed or a size overflowed
  kInternal,          // a bug in Tessera
  kIoError,           // reading or writing a file failed
  kUnavailable,       // a peer rank died or stopped answering, or a collective library failed
};

/// Returns the code's name, e.g. "INVALID_ARGUMENT".
const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "CODE: message", or "OK".
  std::string to_string() const;
  /// Returns a copy whose message is prefixed with `context: `.
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status invalid_file(std::string m) { return {StatusCode::kInvalidFile, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status out_of_memory(std::string m) { return {StatusCode::kOutOfMemory, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

/// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).is_ok()); }  // NOLINT
  bool is_ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace tessera

#define TSR_CONCAT_INNER(a, b) a##b
#define TSR_CONCAT(a, b) TSR_CONCAT_INNER(a, b)

/// Returns from the enclosing function if `expr` (a Status) is not OK.
#define TSR_RETURN_IF_ERROR(expr)                 \
  do {                                            \
    ::tessera::Status _tsr_s = (expr);            \
    if (!_tsr_s.is_ok()) return _tsr_s;           \
  } while (0)

/// `TSR_ASSIGN_OR_RETURN(auto x, f())`: unwraps a Result or returns its Status.
#define TSR_ASSIGN_OR_RETURN(lhs, expr) \
  TSR_ASSIGN_OR_RETURN_IMPL(TSR_CONCAT(_tsr_r, __COUNTER__), lhs, expr)
#define TSR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.is_ok()) return tmp.status();          \
  lhs = std::move(tmp).value()

/// Returns invalid_argument(msg) if `cond` is false. `msg` is a std::string expression.
#define TSR_CHECK_ARG(cond, msg) \
  do {                           \
    if (!(cond)) return ::tessera::invalid_argument(msg); \
  } while (0)
