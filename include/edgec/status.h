// Status and StatusOr: how edgec reports failure, in the public API and inside the library.
// No exception crosses a module boundary; the CLI turns a Status into an exit code and a
// one-line message, the C API into a code and an error string, Python into an exception.
//
// Messages name the file, node, op, input index and the bad value, e.g.
//   Conv 'layer3.0/conv1': input 1 has 3 dims, expected 4
//
// This header is public: the standard library only (the fmt-based helpers the library
// builds messages with are in src/support/status.h).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace edgec {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the user's input (model, tensor, flag) is wrong
  kUnimplemented,    // valid input that edgec does not support
  kNotFound,         // a named thing (file, input, value) does not exist
  kFailedPrecondition,
  kInternal,         // a bug in edgec
  kIo,               // reading or writing a file failed
};

// "invalid argument", "unsupported", ...
inline const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kUnimplemented: return "unsupported";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kInternal: return "internal error";
    case StatusCode::kIo: return "i/o error";
  }
  return "unknown";
}

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "prefix: message" (used to add file or node context).
  Status WithContext(std::string_view prefix) const {
    if (ok()) return *this;
    std::string m(prefix);
    m += ": ";
    m += message_;
    return Status(code_, std::move(m));
  }
  // "invalid argument: <message>", or "ok".
  std::string ToString() const {
    if (ok()) return "ok";
    return std::string(StatusCodeName(code_)) + ": " + message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "StatusOr built from OK status");
  }
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
  T&& operator*() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace edgec

#define EDGEC_CONCAT_INNER(a, b) a##b
#define EDGEC_CONCAT(a, b) EDGEC_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define EDGEC_RETURN_IF_ERROR(expr)            \
  do {                                         \
    ::edgec::Status _edgec_st = (expr);        \
    if (!_edgec_st.ok()) return _edgec_st;     \
  } while (0)

// `EDGEC_ASSIGN_OR_RETURN(auto x, MakeX());`
#define EDGEC_ASSIGN_OR_RETURN(lhs, expr) \
  EDGEC_ASSIGN_OR_RETURN_IMPL(EDGEC_CONCAT(_edgec_statusor_, __LINE__), lhs, expr)
#define EDGEC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
