#include "daemon_loader.h"

namespace stackie {

// Until the loader lands in this tree, stackied serves everything but `up`.
StackLoader daemon_stack_loader(const std::string&) {
  return [](const UpRequest&) -> Result<ResolvedStack> {
    return Error{UV_ENOSYS, "this stackied was built without the stack loader"};
  };
}

std::string daemon_socket_path(const std::string&) {
  return {};
}

LogSettings daemon_log_settings(const std::string&) {
  return LogSettings{};
}

}  // namespace stackie
