// macOS: no port forwarding. The daemon forwards ports into a block's own network namespace
// (port_forward_linux.cc, with splice); on macOS there is none, and a `network: localhost`
// block listens on the host's loopback itself, confined to its declared ports by its Seatbelt
// profile (SandboxPolicy::tcp_bind). StackRunner never asks for a forward there; this says
// so if something does.
#include "supervisor/port_forward.h"

#include <unistd.h>

namespace stackie {

class Relay {};

namespace {

Error unsupported() {
  return Error{UV_ENOTSUP,
               "port forwarding needs a network namespace (Linux); on macOS a localhost block "
               "listens on the host's loopback itself"};
}

}  // namespace

PortForward::PortForward(uv_loop_t* loop, UpstreamFor upstream)
    : loop_(loop), upstream_(std::move(upstream)) {}

// Never listening here: no listener to close (the Linux fields stay unused on macOS).
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
