// The names of the sandbox kinds (spawner.h), shared by every platform's spawners.
#include "spawn/spawner.h"

namespace stackie {

std::string_view to_string(SandboxKind kind) {
  switch (kind) {
    case SandboxKind::linux_namespaces: return "linux-namespaces";
    case SandboxKind::linux_landlock: return "linux-landlock";
    case SandboxKind::seatbelt: return "seatbelt";
    case SandboxKind::restricted_token: return "restricted-token";
    case SandboxKind::passthrough: return "passthrough";
  }
  return "?";
}

}  // namespace stackie
