// The lockbox's setup-failure report (one JSON line on its error pipe, then exit 125), as the
// user reads it. Shared by the spawners of every platform: the report's format is one.
#pragma once

#include <string>

namespace stackie {

// The report's message verbatim with its step named ("... (sandbox step: mounts)"); a line that
// is not the JSON report is shown as the lockbox wrote it; nothing at all says so.
std::string describe_setup_failure(const std::string& report);

}  // namespace stackie
