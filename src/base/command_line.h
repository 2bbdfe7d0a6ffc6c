// The one Windows command-line quoting (argv to the single string CreateProcess takes). Pure,
// so it is built and tested on every OS; the lockbox monitor, the daemon's starter and the
// CLI's own children all use it.
#pragma once

#include <string>
#include <vector>

namespace stackie {

// argv as one Windows command line, quoted the way CommandLineToArgvW and the C runtime split it
// back: a word with no blank or quote goes as it is; any other is quoted, its backslashes
// doubled only before a quote (or the closing one) and its quotes escaped.
std::string windows_command_line(const std::vector<std::string>& argv);

}  // namespace stackie
