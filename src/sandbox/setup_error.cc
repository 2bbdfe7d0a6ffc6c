#include "sandbox/setup_error.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace stackie {
namespace {

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nobody listens any more; the exit code still tells
    done += static_cast<size_t>(n);
  }
}

}  // namespace

SetupError setup_error(std::string_view step, int errnum, std::string_view message) {
  std::string text(message);
  if (errnum != 0) {
    text += ": ";
    text += std::strerror(errnum);
  }
  return SetupError{std::string(step), errnum, std::move(text)};
}

std::string setup_error_json(const SetupError& error) {
  std::string out = "{\"step\":";
  append_json_string(out, error.step);
  out += ",\"errno\":" + std::to_string(error.errnum) + ",\"message\":";
  append_json_string(out, error.message);
  out += "}\n";
  return out;
}

void report(const ErrorSink& sink, const SetupError& error) {
  if (sink.error_fd >= 0) {
    write_all(sink.error_fd, setup_error_json(error));
  } else {
    write_all(STDERR_FILENO, "stackie-lockbox: " + error.step + ": " + error.message + "\n");
  }
}

}  // namespace stackie
