// stackie-lockbox.exe, the Windows monitor, run for real under Wine:
//   wine_lockbox_test.exe LOCKBOX.EXE HELPER.EXE
// HELPER is stackie-wine-test.exe, whose child roles serve as the block. Checks: the block's
// exit code is the monitor's; a missing command is exit 127 with a one-line error; --print-policy
// needs no Windows call; and killing the monitor (TerminateProcess, as a crash or a dying
// daemon's job would) kills the block and the process the block started: the job is the
// monitor's, closed with it; a process the block leaves when it exits has ended by the time the
// monitor exits. Prints one "ok"/"FAIL" line per check; exit 1 if any failed.
#include <windows.h>

#include <cstdio>
#include <string>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

// Stackie's form of a Windows path: '/' separators ("C:/users/x"), as policies require.
std::string forward(std::string path) {
  for (char& c : path)
    if (c == '\\') c = '/';
  return path;
}

std::string temp_dir(const std::string& name) {
  char base[MAX_PATH];
  GetTempPathA(MAX_PATH, base);
  std::string dir =
      std::string(base) + "stackie-lockbox-" + std::to_string(GetCurrentProcessId()) + "-" + name;
  CreateDirectoryA(dir.c_str(), nullptr);
  return forward(dir);
}

struct Run {
  HANDLE process = nullptr;
  DWORD pid = 0;
  std::string output;  // stdout and stderr, when collected
};

// Starts `line`; with `collect`, its stdout+stderr go to a pipe read by finish().
HANDLE g_read_end = nullptr;
Run start(std::string line, bool collect) {
  SECURITY_ATTRIBUTES inheritable{sizeof inheritable, nullptr, TRUE};
  HANDLE write_end = nullptr;
  STARTUPINFOA startup{};
  startup.cb = sizeof startup;
  if (collect) {
    CreatePipe(&g_read_end, &write_end, &inheritable, 0);
    SetHandleInformation(g_read_end, HANDLE_FLAG_INHERIT, 0);
    startup.dwFlags = STARTF_USESTDHANDLES;
    startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    startup.hStdOutput = write_end;
    startup.hStdError = write_end;
  }
  PROCESS_INFORMATION info{};
  Run run;
  if (CreateProcessA(nullptr, line.data(), nullptr, nullptr, collect, 0, nullptr, nullptr, &startup,
                     &info)) {
    CloseHandle(info.hThread);
    run.process = info.hProcess;
    run.pid = info.dwProcessId;
  }
  if (write_end) CloseHandle(write_end);
  return run;
}

DWORD finish(Run& run) {
  if (g_read_end) {
    char buffer[4096];
    DWORD n = 0;
    while (ReadFile(g_read_end, buffer, sizeof buffer, &n, nullptr) && n > 0)
      run.output.append(buffer, n);
    CloseHandle(g_read_end);
    g_read_end = nullptr;
  }
  DWORD code = 0xFFFFFFFF;
  if (run.process) {
    WaitForSingleObject(run.process, 60000);
    GetExitCodeProcess(run.process, &code);
    CloseHandle(run.process);
  }
  return code;
}

std::string quote(const std::string& text) {
  return "\"" + text + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: wine_lockbox_test LOCKBOX.EXE HELPER.EXE\n");
    return 2;
  }
  const std::string lockbox = argv[1], helper = forward(argv[2]);
  const std::string helper_dir = helper.substr(0, helper.find_last_of("\\/"));
  const std::string prefix = quote(lockbox) + " --name lockbox-test --ro " + quote(helper_dir);

  // 1. Exit code and environment relayed from the block.
  {
    std::string tmp = temp_dir("exit");
    Run run =
        start(prefix + " --tmpdir " + quote(tmp) + " --setenv STACKIE_BLOCK lockbox-test -- " +
                  quote(helper) + " child-env 0 plain",
              true);
    check(run.process != nullptr, "the monitor starts");
    DWORD code = finish(run);
    check(code == 42,
          "the block's exit code is the monitor's (42, got " + std::to_string(code) + ")");
    check(run.output.find("TEMP=" + tmp) != std::string::npos,
          "the block's TEMP is its --tmpdir (output: " + run.output + ")");
  }
  // 2. A command that is not there: 127 and one line saying so.
  {
    std::string tmp = temp_dir("missing");
    Run run = start(prefix + " --tmpdir " + quote(tmp) + " -- C:\\no\\such\\program.exe", true);
    DWORD code = finish(run);
    check(code == 127, "a missing command exits 127 (got " + std::to_string(code) + ")");
    check(run.output.find("stackie-lockbox: exec: ") != std::string::npos,
          "and says why on stderr (" + run.output + ")");
  }
  // 3. --print-policy: the flags as the policy JSON.
  {
    Run run = start(prefix + " --tmpdir C:/x --print-policy -- x", true);
    DWORD code = finish(run);
    check(code == 0 && run.output.find("\"name\":\"lockbox-test\"") != std::string::npos,
          "--print-policy prints the policy (" + run.output + ")");
  }
  // 4. The monitor killed: the block and its own child die with the job.
  {
    std::string tmp = temp_dir("kill");
    std::string pid_file = tmp + "/grandchild.pid";
    DeleteFileA(pid_file.c_str());  // Wine reuses pids and this prefix: no stale file
    Run run = start(prefix + " --rw " + quote(tmp) + " --tmpdir " + quote(tmp) + " -- " +
                        quote(helper) + " child-tree " + quote(pid_file),
                    false);
    check(run.process != nullptr, "the monitor starts (tree)");
    DWORD grandchild_pid = 0;
    for (int i = 0; i < 1200 && grandchild_pid == 0; ++i) {  // up to 60 s: Wine can be slow
      if (FILE* in = std::fopen(pid_file.c_str(), "r")) {
        unsigned long pid = 0;
        if (std::fscanf(in, "%lu", &pid) == 1) grandchild_pid = pid;
        std::fclose(in);
      }
      if (grandchild_pid == 0) Sleep(50);
    }
    check(grandchild_pid != 0, "the block started a process of its own");
    HANDLE grandchild = grandchild_pid ? OpenProcess(SYNCHRONIZE, FALSE, grandchild_pid) : nullptr;
    check(grandchild != nullptr, "which is running");
    TerminateProcess(run.process, 9);
    finish(run);
    if (grandchild) {
      check(WaitForSingleObject(grandchild, 30000) == WAIT_OBJECT_0,
            "killing the monitor killed the block's own child (the job closed with it)");
      CloseHandle(grandchild);
    }
  }
  // 5. The block exits and leaves a process running: the monitor ends it before its own exit,
  // which the daemon reports as the block's end (and may start the block again on it).
  {
    std::string tmp = temp_dir("leftover");
    std::string pid_file = tmp + "/grandchild.pid";
    DeleteFileA(pid_file.c_str());
    Run run = start(prefix + " --rw " + quote(tmp) + " --tmpdir " + quote(tmp) + " -- " +
                        quote(helper) + " child-tree-exit " + quote(pid_file),
                    false);
    DWORD grandchild_pid = 0;
    for (int i = 0; i < 1200 && grandchild_pid == 0; ++i) {
      if (FILE* in = std::fopen(pid_file.c_str(), "r")) {
        unsigned long pid = 0;
        if (std::fscanf(in, "%lu", &pid) == 1) grandchild_pid = pid;
        std::fclose(in);
      }
      if (grandchild_pid == 0) Sleep(50);
    }
    HANDLE grandchild = grandchild_pid ? OpenProcess(SYNCHRONIZE, FALSE, grandchild_pid) : nullptr;
    check(grandchild != nullptr, "the block started a process of its own (leftover)");
    DWORD code = finish(run);
    check(code == 0,
          "the block's exit code is the monitor's (0, got " + std::to_string(code) + ")");
    if (grandchild) {
      check(WaitForSingleObject(grandchild, 0) == WAIT_OBJECT_0,
            "the process the block left had ended when its monitor exited");
      WaitForSingleObject(grandchild, 30000);
      CloseHandle(grandchild);
    }
  }
  std::printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
