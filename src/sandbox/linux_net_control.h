// The monitor's half of the net channel (net_channel_protocol.h; DESIGN.md §6): listeners made
// inside the block's network namespace before the block runs, and sockets made there on the
// daemon's request while it runs.
#pragma once

#include <optional>
#include <vector>

#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

struct NetControl {
  int fd = -1;                    // the channel (SOCK_SEQPACKET), -1 = none
  std::vector<int> listen_ports;  // `consumes` listeners: 127.0.0.1:PORT inside
};

// Binds and listens on every port, sends them in one message, closes our copies. Runs in the
// monitor after `lo` is up and before pid 1 is forked, so the listeners exist before the block
// could take the ports itself.
std::optional<SetupError> send_inside_listeners(const NetControl& net);

// Answers one request waiting on the channel; false once the channel is closed or broken.
bool serve_net_request(int fd);

}  // namespace stackie::linux_sandbox
