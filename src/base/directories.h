// Creating directories on the host: the one `mkdir -p` of the project.
#pragma once

#include <string>

#include "base/error.h"

namespace stackie {

// mkdir -p: every directory it creates is 0700 (Stackie's state is private to the user); an
// existing directory, and its mode, are left as they are.
Status make_directories(const std::string& path);

}  // namespace stackie
