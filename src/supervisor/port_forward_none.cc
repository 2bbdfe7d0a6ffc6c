// macOS and Windows: no port forwarding. The daemon forwards ports into a block's own network
// namespace (port_forward_linux.cc, with splice); elsewhere there is none, and a block listens on
// the host's loopback itself: on macOS confined to its declared ports by its Seatbelt profile
// (SandboxPolicy::tcp_bind), on Windows not confined at all (docs/platforms.md). StackRunner
// never asks for a forward there (only linux_namespaces blocks have a network of their own);
// this says so if something does.
#include "supervisor/port_forward.h"

#include <unistd.h>

namespace stackie {

class Relay {};

namespace {

Error unsupported() {
  return Error{UV_ENOTSUP,
               "port forwarding needs a network namespace (Linux); on macOS and Windows a block "
               "listens on the host's loopback itself"};
}

}  // namespace

PortForward::PortForward(uv_loop_t* loop, UpstreamFor upstream)
    : loop_(loop), upstream_(std::move(upstream)) {}

// Never listening here: no listener to close (the Linux fields stay unused).
PortForward::~PortForward() {
  (void)loop_;
  (void)listener_;
}

Result<std::unique_ptr<PortForward>> PortForward::listen_host(uv_loop_t*, int, UpstreamFor) {
  return unsupported();
}

Result<std::unique_ptr<PortForward>> PortForward::adopt(uv_loop_t*, int fd, UpstreamFor) {
  ::close(fd);
  return unsupported();
}

Status PortForward::listen() {
  return unsupported();
}

void PortForward::accept_one() {}

}  // namespace stackie
