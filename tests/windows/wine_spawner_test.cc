// The daemon's Windows spawner (spawn/spawn_lockbox_windows.cc) on a libuv loop, for real under
// Wine, with the real stackie-lockbox.exe:
//   wine_spawner_test.exe LOCKBOX.EXE
// This program is also the block (roles below). Checks: the block's stdout and stderr reach the
// daemon's pipes; its exit code is relayed and on_exec ran first; a missing command is exit 127;
// a sandbox it cannot build comes back as its message; kill_all kills the block's own child; exec
// (join_argv) runs a command under the block's policy; and the daemon's death kills every block: a
// second copy of this program plays the daemon, is killed with TerminateProcess, and the block's
// child must die with it (libuv's job kills the monitor, the monitor's job the block's tree). One
// "ok"/"FAIL" line per check; exit 1 if any failed.
#include <uv.h>
#include <windows.h>

#include <cstdio>
#include <memory>
#include <string>

#include "spawn/spawner.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

// "NAME: spawn (WHY)": a failed spawn says why (one failed under Wine in a CI run, unexplained).
template <typename Spawned>
std::string spawn_note(const std::string& name, const Spawned& spawned) {
  return name + ": spawn (" + (spawned.ok() ? "" : spawned.error().message) + ")";
}

std::string forward(std::string path) {
  for (char& c : path)
    if (c == '\\') c = '/';
  return path;
}

std::string self_path() {
  char path[MAX_PATH];
  DWORD n = GetModuleFileNameA(nullptr, path, MAX_PATH);
  return std::string(path, n);
}

std::string temp_dir(const std::string& name) {
  char base[MAX_PATH];
  GetTempPathA(MAX_PATH, base);
  std::string dir =
      std::string(base) + "stackie-spawner-" + std::to_string(GetCurrentProcessId()) + "-" + name;
  CreateDirectoryA(dir.c_str(), nullptr);
  return forward(dir);
}

DWORD read_pid(const std::string& file) {
  for (int i = 0; i < 1200; ++i) {  // up to 60 s: Wine can be slow
    if (FILE* in = std::fopen(file.c_str(), "r")) {
      unsigned long pid = 0;
      int got = std::fscanf(in, "%lu", &pid);
      std::fclose(in);
      if (got == 1 && pid != 0) return pid;
    }
    Sleep(50);
  }
  return 0;
}

// --- the block's roles -------------------------------------------------------------------------

int block_print() {
  std::printf("hello from the block\n");
  std::fflush(stdout);
  std::fprintf(stderr, "a line on stderr\n");
  return 3;
}

int block_tree(const char* pid_file) {
  STARTUPINFOA startup{};
  startup.cb = sizeof startup;
  PROCESS_INFORMATION info{};
  std::string line = "\"" + self_path() + "\" block-sleep";
  if (!CreateProcessA(nullptr, line.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &startup,
                      &info))
    return 3;
  std::string temp = std::string(pid_file) + ".tmp";
  FILE* out = std::fopen(temp.c_str(), "w");
  if (!out) return 4;
  std::fprintf(out, "%lu\n", info.dwProcessId);
  std::fclose(out);
  MoveFileA(temp.c_str(), pid_file);
  Sleep(120000);  // killed long before
  return 5;
}

// --- the daemon's side -------------------------------------------------------------------------

stackie::SandboxPolicy policy_for(const std::string& name, const std::string& tmp) {
  stackie::SandboxPolicy policy;
  policy.name = name;
  policy.host_tmp_dir = tmp;
  std::string exe = forward(self_path());
  policy.read_only = {{exe.substr(0, exe.find_last_of('/')), ""}};
  policy.read_write = {{tmp, ""}};
  policy.environment = {{"STACKIE_BLOCK", name}};
  return policy;
}

struct Outcome {
  bool exited = false;
  bool exec_seen = false;
  bool exec_before_exit = false;
  stackie::ExitStatus status;
  std::string out, err;
};

void read_into(uv_pipe_t* pipe, std::string* sink) {
  pipe->data = sink;
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(pipe),
      [](uv_handle_t*, size_t size, uv_buf_t* buf) { *buf = uv_buf_init(new char[size], size); },
      [](uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
        if (n > 0) static_cast<std::string*>(stream->data)->append(buf->base, size_t(n));
        if (n < 0) uv_read_stop(stream);
        delete[] buf->base;
      });
}

// Runs `argv` as a block until it exits (the loop runs until every handle is closed).
Outcome run_block(stackie::Spawner& spawner, const std::string& name,
                  const std::vector<std::string>& argv) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  Outcome outcome;
  auto* out = new uv_pipe_t;
  auto* err = new uv_pipe_t;
  uv_pipe_init(&loop, out, 0);
  uv_pipe_init(&loop, err, 0);
  stackie::SpawnRequest request;
  request.argv = argv;
  request.policy = policy_for(name, temp_dir(name));
  request.stdout_pipe = out;
  request.stderr_pipe = err;
  request.on_exec = [&outcome] { outcome.exec_seen = true; };
  std::unique_ptr<stackie::Process> process;
  auto spawned = spawner.spawn(&loop, request, [&](const stackie::ExitStatus& status) {
    outcome.exited = true;
    outcome.exec_before_exit = outcome.exec_seen;
    outcome.status = status;
  });
  check(spawned.ok(), spawn_note(name, spawned));
  if (spawned.ok()) {
    process = std::move(*spawned);
    read_into(out, &outcome.out);
    read_into(err, &outcome.err);
    while (!outcome.exited && uv_run(&loop, UV_RUN_ONCE) != 0) {
    }
  }
  process.reset();
  uv_close(reinterpret_cast<uv_handle_t*>(out), [](uv_handle_t* h) { delete (uv_pipe_t*)h; });
  uv_close(reinterpret_cast<uv_handle_t*>(err), [](uv_handle_t* h) { delete (uv_pipe_t*)h; });
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return outcome;
}

// Runs `loop` (so the policy is written and the monitor starts the block) until the block's
// child has written its pid to `pid_file`; 0 after 60 s.
DWORD run_until_child(uv_loop_t* loop, const std::string& pid_file) {
  for (int i = 0; i < 1200; ++i) {
    uv_run(loop, UV_RUN_NOWAIT);
    if (FILE* in = std::fopen(pid_file.c_str(), "r")) {
      unsigned long pid = 0;
      const bool got = std::fscanf(in, "%lu", &pid) == 1;
      std::fclose(in);
      if (got && pid != 0) return pid;
    }
    Sleep(50);
  }
  return 0;
}

// The daemon role: spawn a block-tree block and run the loop until killed.
int play_daemon(const std::string& lockbox, const std::string& pid_file) {
  auto spawner = stackie::make_lockbox_spawner(lockbox);
  uv_loop_t* loop = uv_default_loop();
  stackie::SpawnRequest request;
  request.argv = {self_path(), "block-tree", pid_file};
  request.policy = policy_for("daemon-block", forward(pid_file.substr(0, pid_file.rfind('/'))));
  auto spawned = spawner->spawn(loop, request, [](const stackie::ExitStatus&) {});
  if (!spawned.ok()) {
    std::fprintf(stderr, "daemon: %s\n", spawned.error().message.c_str());
    return 2;
  }
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "block-print") return block_print();
  if (argc >= 3 && std::string(argv[1]) == "block-tree") return block_tree(argv[2]);
  if (argc >= 2 && std::string(argv[1]) == "block-sleep") {
    Sleep(120000);
    return 6;
  }
  if (argc >= 4 && std::string(argv[1]) == "daemon") return play_daemon(argv[2], argv[3]);
  if (argc < 2) {
    std::fprintf(stderr, "usage: wine_spawner_test LOCKBOX.EXE\n");
    return 2;
  }
  const std::string lockbox = argv[1];
  auto spawner = stackie::make_lockbox_spawner(lockbox);
  check(spawner->kind() == stackie::SandboxKind::restricted_token,
        "the spawner's kind is restricted-token");

  // 1. Output through the daemon's pipes, the exit code relayed, on_exec before the exit.
  {
    Outcome run = run_block(*spawner, "print", {self_path(), "block-print"});
    check(run.exited && run.status.exit_status == 3 && run.status.setup_error.empty(),
          "the block's exit code reaches the daemon (3, got " +
              std::to_string(run.status.exit_status) + ", setup error '" + run.status.setup_error +
              "')");
    check(run.exec_before_exit, "on_exec ran before the exit (the monitor closed its error fd)");
    check(run.out.find("hello from the block") != std::string::npos,
          "the block's stdout reached the daemon's pipe (" + run.out + ")");
    check(run.err.find("a line on stderr") != std::string::npos,
          "the block's stderr reached the daemon's pipe (" + run.err + ")");
  }
  // 2. A missing command: 127 from the monitor, and on_exec never claimed.
  {
    Outcome run = run_block(*spawner, "missing", {"C:\\no\\such\\program.exe"});
    check(run.exited && run.status.exit_status == 127,
          "a missing command exits 127 (got " + std::to_string(run.status.exit_status) + ")");
    check(!run.exec_before_exit, "and on_exec did not run");
  }
  // 2b. A sandbox the monitor cannot build: exit 125 and its report, whole, as the reason (the
  // exit may be seen before the report is read; the spawner waits for the report).
  {
    stackie::SandboxPolicy policy = policy_for("setup", temp_dir("setup"));
    policy.pass_fds = {5};  // refused by the Windows plan: only stdio is passed
    uv_loop_t loop;
    uv_loop_init(&loop);
    stackie::SpawnRequest request;
    request.argv = {self_path(), "block-print"};
    request.policy = policy;
    bool exited = false;
    stackie::ExitStatus status;
    auto spawned = spawner->spawn(&loop, request, [&](const stackie::ExitStatus& got) {
      exited = true;
      status = got;
    });
    check(spawned.ok(), spawn_note("setup", spawned));
    std::unique_ptr<stackie::Process> process;
    if (spawned.ok()) process = std::move(*spawned);
    while (process && !exited && uv_run(&loop, UV_RUN_ONCE) != 0) {
    }
    check(exited && status.exit_status == 125 &&
              status.setup_error.find("only stdio is passed on Windows") != std::string::npos &&
              status.setup_error.find("(sandbox step: plan)") != std::string::npos,
          "a setup failure comes back as the monitor's message, with its step (" +
              status.setup_error + ")");
    process.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  // 3. kill_all: the block's own child dies with it.
  {
    uv_loop_t loop;
    uv_loop_init(&loop);
    std::string tmp = temp_dir("kill");
    std::string pid_file = tmp + "/child.pid";
    DeleteFileA(pid_file.c_str());  // Wine reuses pids and this prefix: no stale file
    stackie::SpawnRequest request;
    request.argv = {self_path(), "block-tree", pid_file};
    request.policy = policy_for("kill", tmp);
    bool exited = false;
    int64_t killed_status = -1;
    auto spawned = spawner->spawn(&loop, request, [&](const stackie::ExitStatus& status) {
      exited = true;
      killed_status = status.exit_status;
    });
    check(spawned.ok(), spawn_note("kill", spawned));
    if (spawned.ok()) {
      std::unique_ptr<stackie::Process> process = std::move(*spawned);
      DWORD child = run_until_child(&loop, pid_file);
      check(child != 0, "kill: the block started a process of its own");
      HANDLE handle = child ? OpenProcess(SYNCHRONIZE, FALSE, child) : nullptr;
      check(process->running() && process->kill_all().ok(), "kill: kill_all");
      while (!exited && uv_run(&loop, UV_RUN_ONCE) != 0) {
      }
      check(exited, "kill: the exit callback ran");
      check(killed_status == 137,
            "kill: the monitor ended the block's job on the daemon's 'k' and relayed 137 (got " +
                std::to_string(killed_status) + ")");
      if (handle) {
        check(WaitForSingleObject(handle, 30000) == WAIT_OBJECT_0,
              "kill_all killed the block's own child");
        CloseHandle(handle);
      }
      process.reset();
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  // 3b. A stop (any signal but SIGKILL): the monitor sends the block CTRL_BREAK. Wine 8.0's
  // console cannot deliver it, so there the monitor ends the block at once, says why on the
  // block's stderr and relays 143; on Windows the block's own exit comes back
  // (STATUS_CONTROL_C_EXIT for a program that does not handle it). Either way its child dies.
  {
    uv_loop_t loop;
    uv_loop_init(&loop);
    std::string tmp = temp_dir("stop");
    std::string pid_file = tmp + "/child.pid";
    DeleteFileA(pid_file.c_str());
    auto* err = new uv_pipe_t;
    uv_pipe_init(&loop, err, 0);
    std::string err_text;
    stackie::SpawnRequest request;
    request.argv = {self_path(), "block-tree", pid_file};
    request.policy = policy_for("stop", tmp);
    request.stderr_pipe = err;
    bool exited = false;
    int64_t status = -1;
    auto spawned = spawner->spawn(&loop, request, [&](const stackie::ExitStatus& got) {
      exited = true;
      status = got.exit_status;
    });
    check(spawned.ok(), spawn_note("stop", spawned));
    if (spawned.ok()) {
      std::unique_ptr<stackie::Process> process = std::move(*spawned);
      read_into(err, &err_text);
      DWORD child = run_until_child(&loop, pid_file);
      HANDLE handle = child ? OpenProcess(SYNCHRONIZE, FALSE, child) : nullptr;
      check(process->signal(SIGTERM).ok(), "stop: the request is written");
      while (!exited && uv_run(&loop, UV_RUN_ONCE) != 0) {
      }
      const bool undeliverable =
          status == 143 && err_text.find("could not ask the block to stop") != std::string::npos;
      const bool delivered = status == static_cast<int64_t>(0xC000013AL);
      check(exited && (undeliverable || delivered),
            "stop: CTRL_BREAK, or the block ended with the reason on its stderr (exit " +
                std::to_string(status) + ", stderr '" + err_text + "')");
      if (handle) {
        check(WaitForSingleObject(handle, 30000) == WAIT_OBJECT_0, "stop: the block's child died");
        CloseHandle(handle);
      }
      process.reset();
    }
    uv_close(reinterpret_cast<uv_handle_t*>(err), [](uv_handle_t* h) { delete (uv_pipe_t*)h; });
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  // 4. exec: join_argv runs a command under a monitor of its own, from the block's policy, while
  // the block runs; nothing once it is gone.
  {
    uv_loop_t loop;
    uv_loop_init(&loop);
    std::string tmp = temp_dir("exec");
    std::string pid_file = tmp + "/child.pid";
    DeleteFileA(pid_file.c_str());
    stackie::SpawnRequest request;
    request.argv = {self_path(), "block-tree", pid_file};
    request.policy = policy_for("exec", tmp);
    request.policy.limits.memory_bytes = 256ull << 20;
    request.policy.limits.pids = 50;
    bool exited = false;
    auto spawned =
        spawner->spawn(&loop, request, [&](const stackie::ExitStatus&) { exited = true; });
    check(spawned.ok(), spawn_note("exec", spawned));
    if (spawned.ok()) {
      std::unique_ptr<stackie::Process> process = std::move(*spawned);
      for (int i = 0; i < 1200 && GetFileAttributesA(pid_file.c_str()) == INVALID_FILE_ATTRIBUTES;
           ++i) {
        uv_run(&loop, UV_RUN_NOWAIT);
        Sleep(50);
      }
      std::vector<std::string> exec = process->join_argv({self_path(), "block-print"}, {});
      check(!exec.empty() && exec[0] == lockbox, "exec: join_argv starts with the lockbox");
      // The command's job gets the block's limits. Wine 8.0 answers zeros for a job's limits
      // (NtQueryInformationJobObject), so the words are checked here, the job the lockbox
      // makes from them by TokenPlan.JobCarriesTheBlocksLimits.
      auto has_words = [&exec](const std::string& flag, const std::string& value) {
        for (size_t i = 0; i + 1 < exec.size(); ++i)
          if (exec[i] == flag && exec[i + 1] == value) return true;
        return false;
      };
      check(has_words("--memory", std::to_string(256ull << 20)) && has_words("--pids", "50"),
            "exec: the command's monitor gets the block's memory and process limits");
      std::string line;
      for (const auto& arg : exec) line += (line.empty() ? "" : " ") + ("\"" + arg + "\"");
      STARTUPINFOA startup{};
      startup.cb = sizeof startup;
      PROCESS_INFORMATION info{};
      DWORD code = 999;
      if (!exec.empty() && CreateProcessA(nullptr, line.data(), nullptr, nullptr, FALSE, 0, nullptr,
                                          nullptr, &startup, &info)) {
        WaitForSingleObject(info.hProcess, INFINITE);
        GetExitCodeProcess(info.hProcess, &code);
        CloseHandle(info.hProcess);
        CloseHandle(info.hThread);
      }
      check(code == 3,
            "exec: the command ran in a sandbox of the block's policy and its exit "
            "code came back (3, got " +
                std::to_string(code) + ")");
      // A command still running in the block when the block stops dies with it (--exit-with
      // names the block's monitor): `down` leaves nothing that `exec` started.
      std::vector<std::string> sleeper = process->join_argv({self_path(), "block-sleep"}, {});
      check(has_words("--exit-with", std::to_string(process->pid())),
            "exec: the command's monitor is told the block's monitor (--exit-with)");
      std::string sleeper_line;
      for (const auto& arg : sleeper)
        sleeper_line += (sleeper_line.empty() ? "" : " ") + ("\"" + arg + "\"");
      PROCESS_INFORMATION sleeping{};
      STARTUPINFOA sleeper_startup{};
      sleeper_startup.cb = sizeof sleeper_startup;
      bool started =
          !sleeper.empty() && CreateProcessA(nullptr, sleeper_line.data(), nullptr, nullptr, FALSE,
                                             0, nullptr, nullptr, &sleeper_startup, &sleeping);
      check(started, "exec: a long command starts in the block");
      Sleep(1000);  // its monitor has started it
      (void)process->kill_all();
      while (!exited && uv_run(&loop, UV_RUN_ONCE) != 0) {
      }
      if (started) {
        DWORD waited = WaitForSingleObject(sleeping.hProcess, 30000);
        DWORD sleeper_code = 0;
        GetExitCodeProcess(sleeping.hProcess, &sleeper_code);
        check(waited == WAIT_OBJECT_0 && sleeper_code == 137,
              "exec: the command's monitor ended with the block (exit 137, got " +
                  std::to_string(sleeper_code) + ")");
        if (waited != WAIT_OBJECT_0) TerminateProcess(sleeping.hProcess, 1);
        CloseHandle(sleeping.hProcess);
        CloseHandle(sleeping.hThread);
      }
      check(process->join_argv({"x"}, {}).empty(), "exec: nothing to join once the block is gone");
      process.reset();
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  // 5. The daemon dies: every block dies with it.
  {
    std::string tmp = temp_dir("daemon");
    std::string pid_file = tmp + "/child.pid";
    DeleteFileA(pid_file.c_str());
    std::string line = "\"" + self_path() + "\" daemon \"" + lockbox + "\" \"" + pid_file + "\"";
    STARTUPINFOA startup{};
    startup.cb = sizeof startup;
    PROCESS_INFORMATION daemon{};
    check(CreateProcessA(nullptr, line.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr,
                         &startup, &daemon) != 0,
          "daemon death: the daemon starts");
    DWORD child = read_pid(pid_file);
    check(child != 0, "daemon death: its block started a process of its own");
    HANDLE handle = child ? OpenProcess(SYNCHRONIZE, FALSE, child) : nullptr;
    check(handle != nullptr && WaitForSingleObject(handle, 0) == WAIT_TIMEOUT,
          "daemon death: which is running");
    TerminateProcess(daemon.hProcess, 9);
    WaitForSingleObject(daemon.hProcess, INFINITE);
    if (handle) {
      check(WaitForSingleObject(handle, 30000) == WAIT_OBJECT_0,
            "killing the daemon killed its block's own child (the daemon's libuv job, then the "
            "monitor's)");
      CloseHandle(handle);
    }
  }
  std::printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
