#include "cli/command_line.h"

namespace stackie::cli {

std::vector<std::string> utf8_command_line(int argc, char** argv) {
  return std::vector<std::string>(argv, argv + argc);
}

}  // namespace stackie::cli
