// Status and StatusOr: how library code reports failure. No exception crosses a module
// boundary; the CLI turns a Status into an exit code and a one-line message.
//
// Messages name the file, node, op, input index and the bad value, e.g.
//   Conv 'layer3.0/conv1': input 1 has 3 dims, expected 4
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

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

const char* StatusCodeName(StatusCode code);

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
    return Status(code_, fmt::format("{}: {}", prefix, message_));
  }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename... Args>
Status InvalidArgument(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Unimplemented(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kUnimplemented, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status NotFound(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Internal(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInternal, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status IoError(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kIo, fmt::format(f, std::forward<Args>(args)...));
}

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
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace edgec

#define EDGEC_CONCAT_INNER(a, b) a##b
#define EDGEC_CONCAT(a, b) EDGEC_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::edgec::Status _st = (expr);              \
    if (!_st.ok()) return _st;                 \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());`
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(EDGEC_CONCAT(_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

// CHECK is for programmer bugs only: it aborts with the location.
#define EDGEC_CHECK(cond)                                                              \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      ::fmt::print(stderr, "edgec: internal check failed at {}:{}: {}\n", __FILE__,    \
                   __LINE__, #cond);                                                   \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)
