// Helpers shared by the base tests: the source/build roots meson passes in the environment, and
// the temporary directory of tests/support.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace stackie::testing {

inline std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

inline std::string source_root() {
  return env_or("STACKIE_SOURCE_ROOT", ".");
}
inline std::string build_root() {
  return env_or("STACKIE_BUILD_ROOT", ".");
}
// Stackie's own catalog in the source tree: a LoadOptions' shipped_block_path.
inline std::string shipped_catalog() {
  return source_root() + "/share/stackie/blocks";
}
inline std::string fixtures() {
  return source_root() + "/tests/fixtures";
}

}  // namespace stackie::testing
