// Windows: no egress proxy. The proxy serves a listener the lockbox made inside a block's own
// network namespace (egress_proxy.cc); Windows blocks have none (they are not network-isolated
// at all, docs/platforms.md), so BlockRunner never adopts one there; this says so if something
// does. (EgressProxy::allowed is not defined here: nothing on Windows asks it.)
#include "supervisor/egress_proxy.h"

#include <io.h>

namespace stackie {

class EgressTunnel {};

EgressProxy::EgressProxy(uv_loop_t* loop, std::vector<std::string> allow, Note note)
    : loop_(loop), allow_(std::move(allow)), note_(std::move(note)) {}

EgressProxy::~EgressProxy() {
  (void)loop_;
  (void)listener_;
}

Result<std::unique_ptr<EgressProxy>> EgressProxy::adopt(uv_loop_t*, int fd,
                                                        std::vector<std::string>, Note) {
  if (fd >= 0) ::_close(fd);
  return Error{UV_ENOTSUP,
               "network: outbound needs a network namespace (Linux); not supported on Windows"};
}

void EgressProxy::accept_one() {}

}  // namespace stackie
