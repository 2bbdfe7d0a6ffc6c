// Helpers shared by the base tests: a temporary directory that cleans up after itself, and the
// source/build roots meson passes in the environment.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

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
inline std::string fixtures() {
  return source_root() + "/tests/fixtures";
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = env_or("TMPDIR", "/tmp") + "/stackie-base-test-XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp " << pattern;
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& relative) const { return path_ + "/" + relative; }

  // Writes `text` to `relative` (creating parent directories); returns the absolute path.
  std::string write(const std::string& relative, const std::string& text,
                    bool executable = false) const {
    std::string file = path_ + "/" + relative;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream(file) << text;
    ::chmod(file.c_str(), executable ? 0755 : 0644);
    return file;
  }
  // An executable stub (a shell script) at `relative`.
  std::string program(const std::string& relative) const {
    return write(relative, "#!/bin/sh\nexit 0\n", true);
  }

 private:
  std::string path_;
};

}  // namespace stackie::testing
