#include "cli/mcp_transport.h"

#include <unistd.h>

#include <cerrno>

namespace stackie::cli::mcp {

void MessageSplitter::feed(std::string_view chunk,
                           const std::function<void(std::string_view line)>& on_line,
                           const std::function<void()>& on_oversized) {
  while (!chunk.empty()) {
    auto newline = chunk.find('\n');
    std::string_view piece = chunk.substr(0, newline);
    chunk = newline == std::string_view::npos ? std::string_view() : chunk.substr(newline + 1);
    bool complete = newline != std::string_view::npos;
    if (!discarding_) {
      if (partial_.size() + piece.size() > max_line_) {
        // Reported once, as soon as the limit is crossed; the rest of the line is skipped.
        partial_.clear();
        discarding_ = true;
        on_oversized();
      } else {
        partial_.append(piece);
      }
    }
    if (!complete) return;
    if (discarding_) {
      discarding_ = false;
      continue;
    }
    std::string line = std::move(partial_);
    partial_.clear();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) on_line(line);
  }
}

Status write_all_to(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return system_error(n < 0 ? errno : EIO, "write");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

int serve_lines(int in_fd, int out_fd, const std::function<std::string(std::string_view)>& handle,
                const std::function<std::string()>& oversized) {
  MessageSplitter splitter;
  bool out_failed = false;
  auto send = [&](const std::string& reply) {
    if (!reply.empty() && !out_failed && !write_all_to(out_fd, reply).ok()) out_failed = true;
  };
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(in_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out_failed ? 1 : 0;
    splitter.feed(
        std::string_view(buffer, static_cast<size_t>(n)),
        [&](std::string_view line) { send(handle(line)); }, [&] { send(oversized()); });
    if (out_failed) return 1;
  }
}

}  // namespace stackie::cli::mcp
