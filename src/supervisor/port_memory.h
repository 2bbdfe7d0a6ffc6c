// Ports that stay put (issue 16): the host port each served port of a stack got, kept per stack
// name and project directory in $STACKIE_HOME/ports.json, so that the next `up` asks for the
// same one instead of drifting back and forth between the declared port and the next free one.
// An entry is used only while the stack still declares the same port: editing `port` or
// `host_port` starts afresh.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "base/json.h"
#include "stack/loader.h"
#include "stack/stack_model.h"
#include "supervisor/supervisor.h"

namespace stackie {

class PortMemory {
 public:
  explicit PortMemory(std::string path);  // reads it; a missing or unreadable file is empty

  // The host port remembered for this request's port (0 = none, or declared differently).
  int recall(const HostPortRequest& request) const;
  // Keeps every served port of `stack` (its file's directory is the project directory).
  void remember(const ResolvedStack& stack);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Json entries_;  // {"STACK PROJECT_DIR": {"BLOCK/PORT": {"wanted": N, "host": M}}}
};

// The daemon's choice of a host port: the remembered one when it can still be had, else the
// declared one, else the next free one; the note says why when it is not the declared port.
Result<HostPortGrant> choose_host_port(const HostPortRequest& request,
                                       const std::vector<BlockStatus>& running,
                                       const PortMemory* memory);

}  // namespace stackie
