#include "ipc/framing.h"

#include <uv.h>

namespace stackie::ipc {

Status LineSplitter::too_long() const {
  return Error{UV_E2BIG, "line longer than the limit of " + std::to_string(max_line_) + " bytes"};
}

Status LineSplitter::feed(std::string_view chunk,
                          const std::function<void(std::string_view line)>& on_line) {
  if (failed_) return too_long();
  const auto deliver = [&](std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) on_line(line);
  };
  while (!chunk.empty()) {
    const std::size_t newline = chunk.find('\n');
    if (newline == std::string_view::npos) {
      // No end in sight: keep the piece only while the line stays within the limit, so memory
      // is bounded by max_line whatever the peer streams.
      if (partial_.size() + chunk.size() > max_line_) {
        failed_ = true;
        partial_.clear();
        partial_.shrink_to_fit();
        return too_long();
      }
      partial_.append(chunk);
      return {};
    }
    const std::string_view head = chunk.substr(0, newline);
    chunk.remove_prefix(newline + 1);
    // The limit counts the line's bytes, "\r" included, "\n" excluded.
    if (partial_.size() + head.size() > max_line_) {
      failed_ = true;
      partial_.clear();
      partial_.shrink_to_fit();
      return too_long();
    }
    if (partial_.empty()) {
      deliver(head);  // the common case: no copy
    } else {
      partial_.append(head);
      std::string line = std::move(partial_);
      partial_.clear();
      deliver(line);
    }
  }
  return {};
}

}  // namespace stackie::ipc
