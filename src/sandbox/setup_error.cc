#include "sandbox/setup_error.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/json.h"

namespace stackie {
namespace {

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
  return to_json_line(
      Json::object({{"step", error.step}, {"errno", error.errnum}, {"message", error.message}}));
}

void report(const ErrorSink& sink, const SetupError& error) {
  if (sink.error_fd >= 0) {
    write_all(sink.error_fd, setup_error_json(error));
  } else {
    write_all(STDERR_FILENO, "stackie-lockbox: " + error.step + ": " + error.message + "\n");
  }
}

}  // namespace stackie
