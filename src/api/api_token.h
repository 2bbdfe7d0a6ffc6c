// The HTTP API's bearer token: $STACKIE_HOME/api.token, 64 hex digits from the kernel's random
// source, made 0600 on first use (O_EXCL, never through a link). An existing file is used only
// when it is a regular file of ours that nobody else may read; otherwise the API does not start
// and the error says why (a token others could read would let them drive every block).
#pragma once

#include <string>

#include "base/error.h"

namespace stackie::api {

std::string token_path(const std::string& home);
Result<std::string> load_or_create_token(const std::string& home);
// Compares in time independent of where they differ.
bool same_token(const std::string& given, const std::string& expected);

}  // namespace stackie::api
