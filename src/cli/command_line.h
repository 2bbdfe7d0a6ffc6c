// The words stackie was run with, as UTF-8 (command_line_posix.cc: argv as it is;
// command_line_windows.cc: main's argv is in the ANSI code page, so the words come from
// GetCommandLineW instead, and the console is told that what we print is UTF-8).
#pragma once

#include <string>
#include <vector>

namespace stackie::cli {

std::vector<std::string> utf8_command_line(int argc, char** argv);

}  // namespace stackie::cli
