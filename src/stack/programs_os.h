// What finding a program asks of the OS: one file per platform (programs_os_posix.cc,
// programs_os_windows.cc). Paths in Stackie's '/' form.
#pragma once

#include <string>
#include <vector>

#include "base/fs_path.h"

namespace stackie {

// A regular file this user may run.
bool is_executable_file(const std::string& path);
// The directories matching a glob, newest version first ("/usr/lib/postgresql/16/bin" before
// ".../15/bin").
std::vector<std::string> expand_glob(const std::string& pattern);
// The path with links resolved, or itself when that fails.
std::string real_path(const std::string& path);
// PATH's separator: ':' on POSIX, ';' on Windows.
char search_path_separator();

}  // namespace stackie
