// The library's side of Status (the type itself is public: include/edgec/status.h): messages
// built with fmt, the short macros, and CHECK for programmer bugs.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "edgec/status.h"

namespace edgec {

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

}  // namespace edgec

#define RETURN_IF_ERROR(expr) EDGEC_RETURN_IF_ERROR(expr)
#define ASSIGN_OR_RETURN(lhs, expr) EDGEC_ASSIGN_OR_RETURN(lhs, expr)

// CHECK is for programmer bugs only: it aborts with the location.
#define EDGEC_CHECK(cond)                                                              \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      ::fmt::print(stderr, "edgec: internal check failed at {}:{}: {}\n", __FILE__,    \
                   __LINE__, #cond);                                                   \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)
