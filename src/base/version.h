#pragma once

#include <string>
#include <string_view>

namespace stackie {

std::string_view version();          // "0.1.0"
std::string_view commit();           // `git describe` at build time, or "unknown"
std::string_view sandbox_backend();  // the backend this build compiled: linux, seatbelt, …

// "NAME 0.1.0 (commit abc1234, sandbox linux)" — what every binary's --version prints.
std::string version_line(std::string_view program);

}  // namespace stackie
