// The one temporary directory of the tests: private (mkdtemp: mode 0700), under `parent` (by
// default $TMPDIR, else /tmp), removed with everything in it when the object goes. A failed
// mkdtemp is a test failure, and ok() is false.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace stackie::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "stackie-test", std::string parent = "") {
    if (parent.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      parent = tmp && *tmp ? tmp : "/tmp";
    }
    std::string pattern = parent + "/" + prefix + "-XXXXXX";
    if (::mkdtemp(pattern.data()))
      path_ = pattern;
    else
      ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
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
  // An executable stub (a shell script that exits 0) at `relative`.
  std::string program(const std::string& relative) const {
    return write(relative, "#!/bin/sh\nexit 0\n", true);
  }

 private:
  std::string path_;
};

}  // namespace stackie::testing
