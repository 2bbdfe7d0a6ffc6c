// The HTTP API's routes (stackie-api(7), docs/openapi.yaml): each path becomes one IPC request
// ({method, params}, docs/ipc.md) served by the daemon's own ipc::Handler through a session
// whose sink is the HTTP response. So the API has no logic of its own and one schema: a result
// is the IPC result, an error the IPC error object, a streamed event the IPC event's data.
#pragma once

#include <memory>
#include <string>

#include "api/http_server.h"
#include "ipc/server.h"

namespace stackie::api {

struct ApiInfo {
  std::string version;
};

// The router for HttpServer: /api/system/health answers without a token; every other path
// needs "Authorization: Bearer TOKEN".
HttpRouter make_router(ipc::Handler& handler, std::string token, ApiInfo info);

// The HTTP status of an IPC error code.
int http_status(const std::string& code);

}  // namespace stackie::api
