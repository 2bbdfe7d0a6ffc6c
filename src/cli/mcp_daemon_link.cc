#include "cli/mcp_daemon_link.h"

#include <uv.h>

#include "cli/cli_daemon.h"
#include "ipc/client.h"

namespace stackie::cli::mcp {

Result<Json> SocketDaemonLink::call(std::string_view method, const Json& params,
                                    const OnEvent& on_event) {
  STACKIE_TRY_ASSIGN(path, daemon_socket_path());
  auto client = ipc::Client::connect(path);
  if (!client.ok()) {
    if (ipc::is_daemon_not_running(client.error()))
      return Error{UV_ENOENT,
                   "the daemon is not running (start it with 'stackie daemon start' "
                   "or 'stackie up')"};
    return Error{client.error().code, path + ": " + client.error().message};
  }
  auto reply = client->call(method, params, on_event);
  if (!reply.ok()) return Error{reply.error().code, "daemon: " + reply.error().message};
  if (!reply->ok()) return Error{0, reply->error().message};
  return reply->result();
}

}  // namespace stackie::cli::mcp
