// "The daemon never lies" (issue 15): one case per numbered item of the issue, each run against
// the real stackied, stackie and stackie-lockbox. Each failed on main at 13efbc3 (the table in
// tests/fault/README.md says how) and passes now.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "support/daemon_harness.h"

namespace stackie::fault {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Cli {
  int code = -1;  // -1: still running at the deadline (then killed)
  std::string out, err;
};

class Honesty : public DaemonHarness {
 protected:
  // `stackie ARGS` in dir_, against our STACKIE_HOME; started now, finished by finish().
  pid_t start_cli(const std::vector<std::string>& args, const std::string& tag,
                  const std::vector<std::pair<std::string, std::string>>& env = {}) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string out = dir_ + "/" + tag + ".out", err = dir_ + "/" + tag + ".err";
      if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr) ||
          ::chdir(dir_.c_str()) != 0)
        std::_Exit(126);
      ::setenv("STACKIE_HOME", home_.c_str(), 1);
      ::unsetenv("XDG_RUNTIME_DIR");
      ::setenv("NO_COLOR", "1", 1);
      for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
      std::vector<char*> argv{const_cast<char*>(stackie_.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(stackie_.c_str(), argv.data());
      std::_Exit(127);
    }
    return pid;
  }
  Cli finish(pid_t pid, const std::string& tag, std::chrono::milliseconds timeout) {
    Cli result;
    result.code = wait_child(pid, timeout);
    if (result.code < 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    result.out = slurp(dir_ + "/" + tag + ".out");
    result.err = slurp(dir_ + "/" + tag + ".err");
    return result;
  }
  Cli cli(const std::vector<std::string>& args, std::chrono::milliseconds timeout = 60s,
          const std::vector<std::pair<std::string, std::string>>& env = {}) {
    std::string tag = "cli-" + std::to_string(++cli_runs_);
    return finish(start_cli(args, tag, env), tag, timeout);
  }
  static int wait_child(pid_t pid, std::chrono::milliseconds timeout) {
    auto end = Clock::now() + timeout;
    do {
      int status;
      if (::waitpid(pid, &status, WNOHANG) == pid)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::this_thread::sleep_for(10ms);
    } while (Clock::now() < end);
    return -1;
  }
  std::string write_file(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // A block that runs `command` (blockhelper actions) in the stack's directory.
  std::string block(const std::string& name, const std::string& actions,
                    const std::string& extra = "") {
    return "    " + name + ":\n      path: .\n      command: [" + helper_ + ", " + actions + "]\n" +
           extra;
  }
  // In a directory of its own: a block with `path: .` writes it, and may not write where
  // another stack is decided (supervisor/stack_neighbours.h).
  std::string stack_file(const std::string& stack, const std::string& blocks) {
    std::filesystem::create_directories(dir_ + "/" + stack);
    return write_file(stack + "/" + stack + ".yml", stack + ":\n  blocks:\n" + blocks);
  }
  Json block_row(ipc::Client& client, const std::string& name) {
    Json rows = ps_blocks(client);  // kept: the loop reads into it
    if (!rows.is_array()) return Json();
    for (const auto& row : rows.as_array())
      if (row["name"].string_or("") == name) return row;
    return Json();
  }
  std::string state_of(const std::string& name) {
    ipc::Client client = connect();
    return block_row(client, name)["state"].string_or("(none)");
  }
  int cli_runs_ = 0;
};

// ---------------------------------------------------------------- 1. init is a transaction

// A catalog-style block whose init writes its guard file first, then takes a while, then makes
// the "database" its command needs: the shape of stackie.postgres's initdb + CREATE DATABASE.
class InitTransaction : public Honesty {
 protected:
  void SetUp() override {
    Honesty::SetUp();
    if (HasFatalFailure()) return;
    helper_dir_ = helper_.substr(0, helper_.rfind('/'));
    std::string blocks = dir_ + "/blocks";
    ::mkdir(blocks.c_str(), 0700);
    std::ofstream(blocks + "/fault.initdb.yml")
        << "fault.initdb:\n"
           "  paths:\n"
           "    data: {volume: data}\n"
           "  programs:\n"
           "    blockhelper: {}\n"
           "  init:\n"
           "    - if:\n"
           "        not_exists: ${paths.data}/MARK\n"
           "        then:\n"
           "          - run: [blockhelper, stamp, '${paths.data}/MARK', sleep, '3000']\n"
           "          - run: [blockhelper, stamp, '${paths.data}/DB']\n"
           "  command: [blockhelper, require, '${paths.data}/DB', wait]\n";
    file_ = write_file("init.yml", "init:\n  blocks:\n    fault.initdb:\n      restart: no\n");
  }
  // The guard file the interrupted init already wrote, found on the host.
  bool mark_written() {
    std::string found = run_find("MARK");
    return !found.empty();
  }
  std::string run_find(const std::string& name) {
    std::string cmd = "find '" + home_ + "' -name " + name + " 2>/dev/null";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[512];
      while (std::fgets(buf, sizeof buf, p)) out += buf;
      ::pclose(p);
    }
    return out;
  }
  std::vector<std::pair<std::string, std::string>> cli_env() {
    // On PATH, not the definition's `search:`: the build tree may be in /tmp, which a
    // definition's own search is not given (stack/users_places.h).
    return {{"STACKIE_BLOCK_PATH", dir_ + "/blocks"}, {"PATH", helper_dir_ + ":/usr/bin:/bin"}};
  }
  std::string helper_dir_;
  std::string file_;
};

TEST_F(InitTransaction, Item01_DownDuringInitIsCleanedAndRedoneOnTheNextUp) {
  start_daemon();
  connect();
  Cli detached = cli({"up", "-d", "-f", file_}, 30s, cli_env());
  ASSERT_EQ(detached.code, 0) << detached.err;
  ASSERT_TRUE(wait_for([&] { return mark_written(); }, 20s)) << "init never began";
  Cli down = cli({"down", "init"}, 30s);
  ASSERT_EQ(down.code, 0) << down.err;
  ASSERT_TRUE(run_find("DB").empty()) << "the init was not interrupted: the test proves nothing";

  Cli up = cli({"up", "-f", file_}, 60s, cli_env());
  EXPECT_EQ(up.code, 0) << "out: " << up.out << "\nerr: " << up.err;
  EXPECT_EQ(state_of("fault.initdb"), "running");
  EXPECT_FALSE(run_find("DB").empty()) << "the init's last step never ran";
}

TEST_F(InitTransaction, Item01_KillNineDuringInitIsCleanedAndRedoneByTheRestore) {
  pid_t daemon = start_daemon();
  connect();
  Cli detached = cli({"up", "-d", "-f", file_}, 30s, cli_env());
  ASSERT_EQ(detached.code, 0) << detached.err;
  ASSERT_TRUE(wait_for([&] { return mark_written(); }, 20s)) << "init never began";
  ::kill(daemon, SIGKILL);
  ASSERT_EQ(wait_exit(daemon, 5s), 128 + SIGKILL);
  ASSERT_TRUE(wait_for([&] { return processes_mentioning(dir_).empty(); }, 5s));
  ASSERT_TRUE(run_find("DB").empty()) << "the init was not interrupted: the test proves nothing";

  start_daemon();  // restores the stack from its state file
  EXPECT_TRUE(wait_for([&] { return state_of("fault.initdb") == "running"; }, 30s))
      << "state: " << state_of("fault.initdb") << "\n"
      << slurp(dir_ + "/daemon.log");
  EXPECT_FALSE(run_find("DB").empty());
}

// A block that stays `starting` until dir/ready exists (its health check looks for it).
std::string slow_block(const std::string& dir, const std::string& helper) {
  return "    slow:\n      path: .\n      command: [" + helper + ", wait]\n" +
         "      health:\n        exec: [" + helper + ", check-file, " + dir +
         "/ready]\n        interval: 200ms\n        retries: 100000\n        start_period: 1h\n";
}

TEST_F(Honesty, Item01_OneOperationAtATimeAndDownEndsAnUpWithItsOwnMessage) {
  start_daemon();
  connect();
  std::string file = stack_file("busy", slow_block(dir_, helper_));
  pid_t first = start_cli({"up", "-f", file}, "first-up");
  ASSERT_TRUE(wait_for([&] { return state_of("slow") == "starting"; }, 20s));

  Cli second = cli({"up", "-f", file}, 20s);
  EXPECT_EQ(second.code, 1) << "a second up of a stack being brought up: " << second.err;
  EXPECT_TRUE(contains(second.err, "in progress")) << second.err;

  Cli down = cli({"down", "busy"}, 30s);
  EXPECT_EQ(down.code, 0) << down.err;
  Cli ended = finish(first, "first-up", 20s);
  EXPECT_EQ(ended.code, 1) << "an up ended by a down: " << ended.err;
  EXPECT_TRUE(contains(ended.err, "taken down")) << ended.err;
}

// ---------------------------------------------------------------- 2. any byte is safe to carry

TEST_F(Honesty, Item02_ANulByteInABlocksOutputKeepsLogsAndFollowersWorking) {
  start_daemon();
  connect();
  std::string file =
      stack_file("nul", block("w", "sleep, 1500, binary, sleep, 1500, print, after-the-nul, wait"));
  pid_t follower = -1;
  {
    Cli up = cli({"up", "-f", file});
    ASSERT_EQ(up.code, 0) << up.err;
    follower = start_cli({"logs", "-f", "w"}, "follower");
  }
  ASSERT_TRUE(
      wait_for([&] { return contains(slurp(dir_ + "/follower.out"), "after-the-nul"); }, 20s))
      << "the follower stopped: " << slurp(dir_ + "/follower.err");
  EXPECT_EQ(wait_child(follower, 0ms), -1) << "logs -f ended";
  ::kill(follower, SIGTERM);
  ::waitpid(follower, nullptr, 0);

  Cli logs = cli({"logs", "w"});
  EXPECT_EQ(logs.code, 0) << logs.err;
  EXPECT_TRUE(contains(logs.out, "nul[\xEF\xBF\xBD] bad[\xEF\xBF\xBD\xEF\xBF\xBD] end"))
      << logs.out;
  EXPECT_TRUE(contains(logs.out, "after-the-nul")) << logs.out;
}

// ---------------------------------------------------------------- 3. logs names stacks

TEST_F(Honesty, Item03_LogsNamesStacksAndHonoursStreams) {
  start_daemon();
  connect();
  std::string one = stack_file("one", block("a", "print, a-out, eprint, a-err, wait"));
  std::string two = stack_file("two", block("b", "print, b-out, wait"));
  ASSERT_EQ(cli({"up", "-f", one}).code, 0);
  ASSERT_EQ(cli({"up", "-f", two}).code, 0);
  ASSERT_TRUE(wait_for([&] { return contains(cli({"logs", "one/a"}).out, "a-err"); }, 10s));

  Cli by_path = cli({"logs", "one/a"});
  EXPECT_EQ(by_path.code, 0) << by_path.err;
  EXPECT_TRUE(contains(by_path.out, "a-out")) << by_path.out;
  Cli unique = cli({"logs", "b"});
  EXPECT_EQ(unique.code, 0) << unique.err;
  EXPECT_TRUE(contains(unique.out, "b-out")) << unique.out;
  Cli project = cli({"logs", "-p", "two"});
  EXPECT_EQ(project.code, 0) << project.err;
  EXPECT_TRUE(contains(project.out, "b-out") && !contains(project.out, "a-out")) << project.out;
  Cli unnamed = cli({"logs"});
  EXPECT_EQ(unnamed.code, 1);
  EXPECT_TRUE(contains(unnamed.err, "one") && contains(unnamed.err, "two")) << unnamed.err;

  Cli out_only = cli({"logs", "one/a", "--stdout"});
  EXPECT_TRUE(contains(out_only.out, "a-out") && !contains(out_only.out, "a-err")) << out_only.out;
  Cli err_only = cli({"logs", "one/a", "--stderr"});
  EXPECT_TRUE(contains(err_only.out, "a-err") && !contains(err_only.out, "a-out")) << err_only.out;
}

// ---------------------------------------------------------------- 4. logs reopen their files

TEST_F(Honesty, Item04_ADeletedOrRotatedLogFileIsMadeAgain) {
  start_daemon();
  ipc::Client client = connect();
  std::string file = stack_file("lg", block("t", "tick, 100"));
  ASSERT_EQ(cli({"up", "-f", file}).code, 0);
  auto status = client.call("status", Json::object({{"block", "t"}}));
  ASSERT_TRUE(status.ok() && status->ok());
  std::string log_dir = status->result()["block"]["paths"]["logs"].string_or("");
  std::string out_log = log_dir + "/stdout.log";
  ASSERT_TRUE(wait_for([&] { return contains(slurp(out_log), "tick 2"); }, 10s)) << out_log;

  // Deleted with its directory: made again, and written.
  ASSERT_EQ(std::system(("rm -rf '" + log_dir + "'").c_str()), 0);
  EXPECT_TRUE(wait_for([&] { return contains(slurp(out_log), "tick"); }, 10s))
      << "no new " << out_log << " after its directory was deleted";

  // Renamed away (someone else's rotation): a new file at the path.
  ASSERT_EQ(::rename(out_log.c_str(), (out_log + ".rotated").c_str()), 0);
  EXPECT_TRUE(wait_for([&] { return contains(slurp(out_log), "tick"); }, 10s))
      << "no new " << out_log << " after it was renamed";
}

// ---------------------------------------------------------------- 5. write failures visible

class DiskFull : public Honesty {
 protected:
  void SetUp() override {
    Honesty::SetUp();
    if (HasFatalFailure()) return;
    preload_ = required_env("STACKIE_ENOSPC_PRELOAD");
    ASSERT_FALSE(preload_.empty()) << "meson sets STACKIE_ENOSPC_PRELOAD";
    switch_ = dir_ + "/disk-full";
  }
  void full(bool on) {
    if (on)
      std::ofstream(switch_) << "1";
    else
      ::unlink(switch_.c_str());
  }
  void preload_into_daemon(const std::string& match) {
    daemon_env_ = {{"LD_PRELOAD", preload_},
                   {"ASAN_OPTIONS", "verify_asan_link_order=0"},
                   {"STACKIE_TEST_ENOSPC_MATCH", match},
                   {"STACKIE_TEST_ENOSPC_SWITCH", switch_}};
  }
  std::string preload_, switch_;
};

TEST_F(DiskFull, Item05_AStateFileThatCannotBeWrittenFailsUpAndDown) {
  preload_into_daemon("/state.json");
  start_daemon();
  connect();
  std::string file = stack_file("sf", block("w", "wait"));
  full(true);
  Cli up = cli({"up", "-f", file});
  EXPECT_EQ(up.code, 1) << "up said: " << up.out;
  EXPECT_TRUE(contains(up.err, "state file")) << up.err;
  EXPECT_EQ(cli({"ps"}).out.find("sf"), std::string::npos) << "a stack not recorded was started";

  full(false);
  ASSERT_EQ(cli({"up", "-f", file}).code, 0);
  full(true);
  Cli down = cli({"down", "sf"});
  EXPECT_EQ(down.code, 1) << "down said: " << down.out;
  EXPECT_TRUE(contains(down.err, "state file")) << down.err;
  full(false);
  EXPECT_EQ(cli({"down", "sf"}).code, 0) << "a second down, with room again, lets go of it";
}

TEST_F(DiskFull, Item05_LogWriteFailuresShowInStatus) {
  preload_into_daemon("/stdout.log");
  start_daemon();
  connect();
  std::string file = stack_file("lf", block("t", "tick, 100"));
  ASSERT_EQ(cli({"up", "-f", file}).code, 0);
  full(true);
  Cli status;
  EXPECT_TRUE(wait_for(
      [&] {
        status = cli({"status", "t"});
        return contains(status.out, "NOT WRITTEN");
      },
      10s))
      << status.out;
  EXPECT_TRUE(contains(status.out, "No space left on device")) << status.out;
  full(false);
  EXPECT_TRUE(wait_for([&] { return !contains(cli({"status", "t"}).out, "NOT WRITTEN"); }, 10s));
}

TEST_F(DiskFull, Item05_DoctorWritesForReal) {
  Cli doctor = cli({"doctor"}, 60s,
                   {{"LD_PRELOAD", preload_},
                    {"ASAN_OPTIONS", "verify_asan_link_order=0"},
                    {"STACKIE_TEST_ENOSPC_MATCH", "doctor-probe"},
                    {"STACKIE_TEST_ENOSPC_SWITCH", dir_}});  // exists: always full
  EXPECT_EQ(doctor.code, 1);
  EXPECT_TRUE(contains(doctor.out, "FAIL storage writable")) << doctor.out;
  EXPECT_TRUE(contains(doctor.out, "No space left on device")) << doctor.out;
}

// ---------------------------------------------------------------- 6. socket gone

TEST_F(Honesty, Item06_ADeletedSocketIsBoundAgain) {
  pid_t daemon = start_daemon();
  connect();
  ASSERT_EQ(::unlink(socket_path().c_str()), 0);
  Cli ps;
  EXPECT_TRUE(wait_for(
      [&] {
        ps = cli({"ps"});
        return ps.code == 0;
      },
      5s))
      << "after the socket was deleted: " << ps.err;
  // Its whole directory too.
  // (rm -rf may race with the daemon binding again inside it: its status is not the point.)
  std::string run = socket_path().substr(0, socket_path().rfind('/'));
  (void)!std::system(("rm -rf '" + run + "'").c_str());
  EXPECT_TRUE(wait_for(
      [&] {
        ps = cli({"ps"});
        return ps.code == 0;
      },
      5s))
      << "after the socket's directory was deleted: " << ps.err;
  EXPECT_TRUE(process_alive(daemon));
}

// ---------------------------------------------------------------- 7. every wait has an end

TEST_F(Honesty, Item07_UpAfterStopStartsTheBlockAgain) {
  start_daemon();
  connect();
  std::string file = stack_file("st", block("w", "wait"));
  ASSERT_EQ(cli({"up", "-f", file}).code, 0);
  Cli stop = cli({"stop", "w"});
  ASSERT_EQ(stop.code, 0) << stop.err;
  EXPECT_EQ(state_of("w"), "stopped") << "stop returned before the block was stopped";
  Cli up = cli({"up", "-f", file}, 30s);
  EXPECT_EQ(up.code, 0) << "up after stop: " << up.err;
  EXPECT_EQ(state_of("w"), "running");
  Cli detach_stop = cli({"stop", "w"});
  ASSERT_EQ(detach_stop.code, 0);
  Cli detached = cli({"up", "-d", "-f", file}, 30s);
  EXPECT_EQ(detached.code, 0);
  EXPECT_TRUE(wait_for([&] { return state_of("w") == "running"; }, 10s))
      << "up --detach left the stopped block stopped";
}

TEST_F(Honesty, Item07_UpWaitingForABlockThatIsStoppedEndsAndSaysSo) {
  start_daemon();
  connect();
  std::string file = stack_file("ws", slow_block(dir_, helper_));
  pid_t up = start_cli({"up", "-f", file}, "waiting-up");
  ASSERT_TRUE(wait_for([&] { return state_of("slow") == "starting"; }, 20s));
  Cli stop = cli({"stop", "slow"});
  EXPECT_EQ(stop.code, 0) << stop.err;
  Cli ended = finish(up, "waiting-up", 20s);
  EXPECT_EQ(ended.code, 1) << "up never returned, or said: " << ended.out;
  EXPECT_TRUE(contains(ended.err, "slow") && contains(ended.err, "stopped")) << ended.err;
}

TEST_F(Honesty, Item07_StartAndRestartWaitUntilRunningAndAStartWhileStoppingIsKept) {
  start_daemon();
  connect();
  // Ignores SIGTERM: its stop takes stop_timeout (2 s), long enough to start it meanwhile.
  std::string file =
      stack_file("sw", block("w", "ignore, TERM, wait",
                             "      stop_timeout: 2s\n      health:\n        exec: [" + helper_ +
                                 ", check-file, /]\n        interval: 300ms\n"));
  ASSERT_EQ(cli({"up", "-f", file}).code, 0);
  Cli restart = cli({"restart", "w"}, 30s);
  EXPECT_EQ(restart.code, 0) << restart.err;
  EXPECT_TRUE(contains(restart.out, "w: running")) << restart.out;

  Cli stop = cli({"stop", "--no-wait", "w"});
  ASSERT_EQ(stop.code, 0) << stop.err;
  ASSERT_EQ(state_of("w"), "stopping");
  Cli start = cli({"start", "w"}, 30s);
  EXPECT_EQ(start.code, 0) << start.err;
  EXPECT_TRUE(contains(start.out, "w: running")) << start.out;
  std::this_thread::sleep_for(3s);  // past the stop timeout: the start was not dropped
  EXPECT_EQ(state_of("w"), "running");
}

// ---------------------------------------------------------------- 8. reachable under idlers

TEST_F(Honesty, Item08_SilentConnectionsDoNotLockTheCliOut) {
  start_daemon();
  connect();
  std::vector<int> idle;
  for (int i = 0; i < 80; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path().c_str());
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    idle.push_back(fd);
  }
  std::this_thread::sleep_for(300ms);  // every one accepted
  Cli ps = cli({"ps"});
  EXPECT_EQ(ps.code, 0) << "with 80 silent connections open: " << ps.err;
  for (int fd : idle) ::close(fd);
}

// ---------------------------------------------------------------- 9. passthrough dies too

TEST_F(Honesty, Item09_APassthroughBlockDiesWithTheDaemon) {
  pid_t daemon = start_daemon();
  connect();
  std::string file = stack_file("pt", block("free", "stamp, " + dir_ + "/free.starts, wait",
                                            "      platforms:\n        linux: {sandbox: false}\n"));
  ASSERT_EQ(cli({"up", "-f", file}).code, 0);
  ASSERT_EQ(state_of("free"), "running");
  ASSERT_FALSE(processes_mentioning(dir_ + "/free.starts").empty());
  ::kill(daemon, SIGKILL);
  ASSERT_EQ(wait_exit(daemon, 5s), 128 + SIGKILL);
  EXPECT_TRUE(wait_for([&] { return processes_mentioning(dir_ + "/free.starts").empty(); }, 5s))
      << "the passthrough block outlived kill -9 of its daemon";
}

// ---------------------------------------------------------------- 10. exit codes

TEST_F(Honesty, Item10_EachExitCodeAsDocumented) {
  Cli none = cli({"ps"});
  EXPECT_EQ(none.code, 3) << "no daemon: " << none.err;
  EXPECT_EQ(cli({"ps", "--no-such-option"}).code, 2);
  start_daemon();
  connect();
  EXPECT_EQ(cli({"ps"}).code, 0);
  Cli missing = cli({"status", "no-such-block"});
  EXPECT_EQ(missing.code, 1) << missing.err;
}

TEST_F(Honesty, Item10_AStoppedDaemonIsExitThreeAndDoctorSeesIt) {
  pid_t daemon = start_daemon();
  connect();
  ASSERT_EQ(::kill(daemon, SIGSTOP), 0);
  Cli doctor = cli({"doctor"}, 60s);
  Cli ps = cli({"ps"}, 90s);  // the client's own deadline is 30 s
  ::kill(daemon, SIGCONT);
  EXPECT_EQ(doctor.code, 1);
  EXPECT_TRUE(contains(doctor.out, "FAIL daemon")) << doctor.out;
  EXPECT_EQ(ps.code, 3) << "a daemon that does not answer: " << ps.err;
}

TEST_F(Honesty, Item10_DoctorCreatesNothing) {
  ASSERT_NE(::access(home_.c_str(), F_OK), 0);
  cli({"doctor"}, 60s);
  EXPECT_NE(::access(home_.c_str(), F_OK), 0) << "doctor created " << home_;
}

}  // namespace
}  // namespace stackie::fault
