// Every OS but macOS: there is no launchd to pass a socket (launchd_activation.h).
#include "supervisor/launchd_activation.h"

namespace stackie {

Result<int> take_launchd_socket() {
  return -1;
}

}  // namespace stackie
