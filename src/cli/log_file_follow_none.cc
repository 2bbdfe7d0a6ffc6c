// No follower of log files here (log_file_follow.h): `logs -f` takes the daemon's events.
#include "cli/log_file_follow.h"

#include <uv.h>

namespace stackie::cli {

struct LogFileFollow::Impl {};

bool LogFileFollow::supported() {
  return false;
}

Result<std::unique_ptr<LogFileFollow>> LogFileFollow::create() {
  return Error{UV_ENOTSUP, "no follower of log files on this platform"};
}

LogFileFollow::~LogFileFollow() = default;

void LogFileFollow::finish(const std::string&, const std::string&, const Records&, const Note&) {}

Result<LogFileFollow::Ready> LogFileFollow::wait(int, int) const {
  return Error{UV_ENOTSUP, "no follower of log files on this platform"};
}

Status LogFileFollow::add(const std::string&, const std::string&, const std::string&,
                          const LogFileStart*, const LogFileStart*) {
  return Error{UV_ENOTSUP, "no follower of log files on this platform"};
}

bool LogFileFollow::drain(const Records&, const Note&) {
  return true;
}

}  // namespace stackie::cli
