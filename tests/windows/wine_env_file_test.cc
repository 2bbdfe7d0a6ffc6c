// The Windows reader of env files (stack/env_file_read_windows.cc) against a hostile block's
// plants, for real under Wine: a directory symlink on the way below the stack's directory, the
// file itself a symlink, a directory where the file should be. Each must be refused with one
// line saying why; a plain file is read. env_file_plants.sh makes the tree (Unix symlinks: Wine
// shows them to Windows programs). Prints one "ok"/"FAIL" line per check, exits 1 if any failed.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <cstdio>
#include <string>

#include "stack/env_file.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

std::string slashes(std::string path) {
  for (char& c : path)
    if (c == '\\') c = '/';
  return path;
}

std::string message_of(const stackie::Result<std::string>& result) {
  return result.ok() ? "read: " + *result : result.error().message;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR (made by env_file_plants.sh)\n", argv[0]);
    return 2;
  }
  std::string root = slashes(argv[1]);
  std::string project = root + "/project", outside = root + "/outside";

  auto plain = stackie::read_env_file(project + "/conf/app.env", project);
  check(plain.ok() && *plain == "MODE=plain\n",
        "a plain file below the stack is read (" + message_of(plain) + ")");

  auto directory = stackie::read_env_file(project + "/dir.env", project);
  check(
      !directory.ok() && directory.error().message.find("not a regular file") != std::string::npos,
      "a directory is refused: " + message_of(directory));

  auto on_the_way = stackie::read_env_file(project + "/linked/secret.env", project);
  check(!on_the_way.ok() &&
            on_the_way.error().message.find("symlink or junction on the way") != std::string::npos,
        "a directory symlink on the way out of the stack's directory is refused: " +
            message_of(on_the_way));
  auto itself = stackie::read_env_file(project + "/file.env", project);
  check(!itself.ok() && itself.error().message.find("it is a symlink") != std::string::npos,
        "an env file that is itself a symlink is refused: " + message_of(itself));
  auto elsewhere = stackie::read_env_file(project + "/file.env", outside);
  check(!elsewhere.ok() && elsewhere.error().message.find("it is a symlink") != std::string::npos,
        "outside the stack's directory too, the file itself may not be a symlink: " +
            message_of(elsewhere));

  std::printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
