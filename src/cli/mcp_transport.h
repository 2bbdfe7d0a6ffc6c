// The stdio transport of `stackie mcp serve --stdio` (MCP: newline-delimited JSON-RPC messages
// on stdin and stdout; stderr is free for diagnostics). The splitter is pure (no I/O) so it is
// tested apart from the loop. Unlike the IPC's LineSplitter, an oversized message does not end
// the session: MCP messages hold no raw newline, so the next newline is a safe place to resume.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace stackie::cli::mcp {

// The longest message the server reads (a tools/call with a long argv is far shorter).
inline constexpr std::size_t kMaxMessage = std::size_t{1} << 20;

class MessageSplitter {
 public:
  explicit MessageSplitter(std::size_t max_line = kMaxMessage) : max_line_(max_line) {}

  // Calls on_line for each complete line (without "\n" or a "\r" before it; empty lines are
  // skipped), and on_oversized once for each line longer than max_line, whose bytes are
  // dropped as they come: memory never holds more than max_line bytes.
  void feed(std::string_view chunk, const std::function<void(std::string_view line)>& on_line,
            const std::function<void()>& on_oversized);

  std::size_t buffered() const { return partial_.size(); }

 private:
  std::size_t max_line_;
  std::string partial_;
  bool discarding_ = false;  // inside an oversized line, until its newline
};

// Writes all of `bytes` to fd (retrying on EINTR and short writes).
Status write_all_to(int fd, std::string_view bytes);

// Reads messages from in_fd until end of file, answering each through `handle` (which returns
// the reply line, or "" for none) on out_fd; `oversized` gives the reply to a message over the
// limit. Returns 0 at end of input, 1 when out_fd fails (the client went away).
int serve_lines(int in_fd, int out_fd, const std::function<std::string(std::string_view)>& handle,
                const std::function<std::string()>& oversized);

}  // namespace stackie::cli::mcp
