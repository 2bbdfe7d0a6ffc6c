// Errors as values (DESIGN.md §8). Modules return Result<T>; only the edge (a main, a command,
// an IPC handler) prints, and it prints once.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace stackie {

// `code` follows libuv's convention: a negative errno (UV_ENOENT == -ENOENT on Unix), or 0 when
// the failure has no system cause (a bad field in a file, a usage error).
struct Error {
  int code = 0;
  std::string message;
};

// Where in a file a problem is. Line and column are 1-based, as editors show them.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// "FILE:LINE:COLUMN: message" (or "FILE: message" when no position is known).
std::string format_location(const SourceLocation& where);
Error error_at(const SourceLocation& where, std::string_view message);

// "message: strerror(errno)" with code = -errnum.
Error system_error(int errnum, std::string_view message);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit on purpose
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit on purpose

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(state_);
  }
  Error&& take_error() {
    assert(!ok());
    return std::get<1>(std::move(state_));
  }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT: implicit on purpose

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(failed_);
    return error_;
  }
  Error&& take_error() {
    assert(failed_);
    return std::move(error_);
  }

 private:
  Error error_;
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace stackie

// Propagate a failed Result from the enclosing function; otherwise evaluate to nothing.
#define STACKIE_TRY(expr)                                                   \
  do {                                                                      \
    auto stackie_try_result_ = (expr);                                      \
    if (!stackie_try_result_.ok()) return stackie_try_result_.take_error(); \
  } while (0)

// Declare `var` from a Result-returning expression, propagating its error.
#define STACKIE_TRY_ASSIGN(var, expr)                         \
  auto var##_result_ = (expr);                                \
  if (!var##_result_.ok()) return var##_result_.take_error(); \
  auto var = std::move(var##_result_).value()
