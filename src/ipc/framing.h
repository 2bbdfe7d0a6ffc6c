// Line framing of the IPC stream, pure (no I/O) so it is tested apart from the transport: bytes
// arrive in arbitrary chunks, complete lines come out. Memory stays bounded by the line limit:
// an overlong line is reported as soon as the limit is crossed, never buffered to its end.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace stackie::ipc {

inline constexpr std::size_t kDefaultMaxLine = std::size_t{1} << 20;  // 1 MiB

class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line = kDefaultMaxLine) : max_line_(max_line) {}

  // Calls on_line for every complete line in the stream so far, without its "\n" (a trailing
  // "\r" is dropped too; empty lines are skipped). Returns an error with code UV_E2BIG once a
  // line exceeds max_line bytes; the splitter is then failed for good (the stream has lost its
  // framing: the connection must end) and every later feed returns the same error. Lines
  // completed before the overlong one in the same chunk are still delivered. on_line may not
  // call feed() on the same splitter.
  Status feed(std::string_view chunk, const std::function<void(std::string_view line)>& on_line);

  // Bytes of an incomplete line waiting for the rest (never more than max_line).
  std::size_t buffered() const { return partial_.size(); }
  bool failed() const { return failed_; }
  std::size_t max_line() const { return max_line_; }

 private:
  Status too_long() const;

  std::size_t max_line_;
  std::string partial_;
  bool failed_ = false;
};

}  // namespace stackie::ipc
