// `stackie exec` on Windows: CMD (the lockbox monitor and, through it, the command) gets three
// anonymous pipes, never a handle of ours, and a thread per stream moves the bytes: ReadFile
// blocks on a console, a pipe or a file alike, which libuv's loop would need three kinds of
// handle for. No pty yet (ConPTY is for later): an interactive program sees pipes, and
// console input reaches it a line at a time. Ctrl-C reaches CMD through the shared console.
#include <windows.h>

#include <cstdio>
#include <thread>

#include "base/fs_path.h"
#include "base/windows_text.h"
#include "cli/exec_relay.h"
#include "cli/process_windows.h"

namespace stackie::cli {

namespace {

// Copies `from` to `to` until `from` ends or `to` breaks; closes `close_after` then (CMD's
// stdin: EOF reaches it).
void pump(HANDLE from, HANDLE to, HANDLE close_after) {
  char buffer[16384];
  for (;;) {
    DWORD n = 0;
    if (!ReadFile(from, buffer, sizeof buffer, &n, nullptr) || n == 0) break;
    DWORD written = 0;
    bool ok = true;
    for (DWORD at = 0; ok && at < n; at += written)
      ok = WriteFile(to, buffer + at, n - at, &written, nullptr) && written > 0;
    if (!ok) break;
  }
  if (close_after != nullptr) CloseHandle(close_after);
}

struct Pipe {
  HANDLE read = nullptr;
  HANDLE write = nullptr;
};

Result<Pipe> make_pipe() {
  Pipe pipe;
  if (!CreatePipe(&pipe.read, &pipe.write, nullptr, 0)) return windows_error("CreatePipe");
  return pipe;
}

// The directory of `program` (the lockbox's own), so that the caller's cwd is not CMD's.
std::string program_dir(const std::string& program) {
  size_t slash = program.find_last_of("/\\");
  return slash == std::string::npos ? std::string() : program.substr(0, slash);
}

}  // namespace

Result<int> run_relayed(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  STACKIE_TRY_ASSIGN(in, make_pipe());
  STACKIE_TRY_ASSIGN(out, make_pipe());
  STACKIE_TRY_ASSIGN(err, make_pipe());
  ChildSpec spec;
  spec.argv = argv;
  spec.env = &env;
  spec.cwd = program_dir(argv[0]);
  spec.stdio[0] = in.read;
  spec.stdio[1] = out.write;
  spec.stdio[2] = err.write;
  auto started = start_process(spec);
  // Only the child holds its ends now: our reads end when CMD (and all it started) closed
  // them.
  CloseHandle(in.read);
  CloseHandle(out.write);
  CloseHandle(err.write);
  if (!started.ok()) {
    CloseHandle(in.write);
    CloseHandle(out.read);
    CloseHandle(err.read);
    return started.take_error();
  }
  HANDLE process = *started;
  // stdin's thread may block in a console read after CMD is done: it is left behind, and the
  // process exits under it.
  std::thread(pump, GetStdHandle(STD_INPUT_HANDLE), in.write, in.write).detach();
  std::thread stdout_thread(pump, out.read, GetStdHandle(STD_OUTPUT_HANDLE), out.read);
  std::thread stderr_thread(pump, err.read, GetStdHandle(STD_ERROR_HANDLE), err.read);
  int code = wait_for_exit(process);
  CloseHandle(process);
  stdout_thread.join();
  stderr_thread.join();
  return code;
}

int run_directly(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 bool keep_env, const std::string& cwd) {
  ChildSpec spec;
  spec.argv = argv;
  if (!keep_env) spec.env = &env;
  spec.cwd = cwd;
  if (!cwd.empty() && GetFileAttributesW(widen(cwd).c_str()) == INVALID_FILE_ATTRIBUTES) {
    std::fprintf(stderr, "stackie: exec: cannot enter %s: %s\n", cwd.c_str(),
                 windows_error("").message.c_str());
    spec.cwd.clear();
  }
  auto started = start_process(spec);
  if (!started.ok()) {
    std::fprintf(stderr, "stackie: exec: %s\n", started.error().message.c_str());
    return 127;
  }
  int code = wait_for_exit(*started);
  CloseHandle(*started);
  return code;
}

}  // namespace stackie::cli
