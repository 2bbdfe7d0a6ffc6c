// The hostile checks that hold under both Linux backends (issue 20), run side by side: the
// namespace lockbox and the landlock backend (stackie-lockbox --backend). Each check also runs a
// control that proves the check can fail: the same action outside the sandbox, or inside with
// the rule that allows it (--ro, --allow-connect, --allow-bind), succeeds. What the landlock
// backend cannot hold (the host's pid space, hostname, uid, UDP...) is listed in
// stackie-lockbox(1) BACKENDS, not asserted here.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "base/sandbox_probe.h"
#include "lockbox_harness.h"
#include "sandbox/linux_launch.h"

namespace stackie::testing {
namespace {

// A listener of this (host) process, closed with the object.
struct HostListener {
  int fd = -1;
  int port = 0;
  HostListener() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 && listen(fd, 8) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      port = ntohs(addr.sin_port);
  }
  ~HostListener() { close(fd); }
};

// A port nobody listens on now (bound, read, closed).
int free_port() {
  HostListener probe;
  return probe.port;
}

// A unix socket of this process, listening at `address` (abstract when it starts with '\0').
struct UnixListener {
  int fd = -1;
  explicit UnixListener(const std::string& address) {
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, address.data(), address.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size());
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
    EXPECT_EQ(listen(fd, 8), 0);
  }
  ~UnixListener() { close(fd); }
};

class Backends : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    STACKIE_REQUIRE_UNPRIVILEGED();
    if (landlock() && landlock_abi_version() < 1) GTEST_SKIP() << "this kernel has no Landlock";
    if (!landlock() && !probe_namespace_sandbox().works)
      GTEST_SKIP() << "this host cannot run the namespace lockbox";
    use_backend(GetParam());
  }
  void TearDown() override { use_backend(""); }
  bool landlock() const { return GetParam() == "landlock"; }
  std::string probe(const std::vector<std::string>& args,
                    const std::vector<std::string>& flags = {}) {
    RunResult r = run_probe(flags, args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return trim(r.out);
  }
  // The errno the backend answers with when a path is not in the policy.
  std::string hidden() const { return landlock() ? "EACCES" : "ENOENT"; }
};

TEST_P(Backends, FileOutsideThePolicyCannotBeRead) {
  TempDir dir;
  std::string secret = dir.write("secret", "s3cret");
  EXPECT_EQ(probe({"read", secret}), hidden());
  EXPECT_EQ(probe({"list", dir.path()}), hidden());
  // Control: the rule decides (shown with --ro, the file is read).
  EXPECT_EQ(probe({"read", secret}, {"--ro", dir.path()}), "s3cret");
}

TEST_P(Backends, ReadOnlyPathCannotBeWritten) {
  TempDir dir;
  std::string file = dir.write("file", "original");
  EXPECT_EQ(probe({"write", file}, {"--ro", dir.path()}), landlock() ? "EACCES" : "EROFS");
  EXPECT_EQ(probe({"write", dir / "new"}, {"--ro", dir.path()}), landlock() ? "EACCES" : "EROFS");
  EXPECT_EQ(probe({"write", file}, {"--rw", dir.path()}), "ok");  // control
}

// The project directory is read-write but its stack file and .git are read-only (issue 14):
// Landlock only adds rights, so the directory itself must not be granted write.
TEST_P(Backends, ReadOnlyPathInsideReadWriteDirectoryStaysReadOnly) {
  TempDir dir;
  std::string stack = dir.write("project/stackie-stack.yml", "blocks: {}\n");
  std::string hook = dir.write("project/.git/hooks/pre-commit", "#!/bin/sh\n");
  std::string source = dir.write("project/src/main.c", "int main;\n");
  std::string readme = dir.write("project/README", "hi\n");
  std::vector<std::string> flags = {"--rw", dir / "project", "--ro",
                                    stack,  "--ro",          dir / "project/.git"};
  std::string refused = landlock() ? "EACCES" : "EROFS";
  EXPECT_EQ(probe({"write", stack}, flags), refused);
  EXPECT_EQ(probe({"write", hook}, flags), refused);
  EXPECT_NE(probe({"unlink", stack}, flags), "ok");
  EXPECT_NE(probe({"unlink", hook}, flags), "ok");
  // Control: the rest of the project stays writable.
  EXPECT_EQ(probe({"write", source}, flags), "ok");
  EXPECT_EQ(probe({"write", readme}, flags), "ok");
  EXPECT_EQ(probe({"write", dir / "project/src/new.c"}, flags), "ok");
}

TEST_P(Backends, UndeclaredPortCannotBeReached) {
  HostListener host;
  ASSERT_GT(host.port, 0);
  std::string port = std::to_string(host.port);
  // The namespace lockbox has its own network namespace: nothing listens there.
  std::string closed = landlock() ? "EACCES" : "ECONNREFUSED";
  EXPECT_EQ(probe({"connect-port", port}, {"--net", "localhost"}), closed);
  EXPECT_EQ(probe({"connect-port", port}, {"--net", "none"}),
            landlock() ? "EACCES" : "ECONNREFUSED");
  if (landlock()) {
    if (landlock_abi_version() < 4) GTEST_SKIP() << "Landlock ABI < 4: no TCP rules";
    // Control: the consumed port opens exactly that port, and only with network localhost.
    EXPECT_EQ(probe({"connect-port", port}, {"--net", "localhost", "--allow-connect", port}), "ok");
    EXPECT_EQ(probe({"connect-port", port}, {"--net", "none", "--allow-connect", port}), "EACCES");
  }
  EXPECT_EQ(run({probe_path(), "connect-port", port}).out, "ok\n");  // control: the host
}

TEST_P(Backends, OnlyServedPortsCanBeBound) {
  if (!landlock()) GTEST_SKIP() << "the namespace lockbox binds in its own network namespace";
  if (landlock_abi_version() < 4) GTEST_SKIP() << "Landlock ABI < 4: no TCP rules";
  std::string port = std::to_string(free_port());
  EXPECT_EQ(probe({"bind-port", port}, {"--net", "localhost"}), "EACCES");
  EXPECT_EQ(probe({"bind-port", port}, {"--net", "localhost", "--allow-bind", port}), "ok");
}

TEST_P(Backends, HostProcessesCannotBeSignalled) {
  if (landlock() && landlock_abi_version() < 6)
    GTEST_SKIP() << "Landlock ABI < 6: signals are not scoped (stackie-lockbox(1) BACKENDS)";
  pid_t victim = fork();
  if (victim == 0) {
    pause();
    _exit(0);
  }
  std::string pid = std::to_string(victim);
  // Landlock: the process exists but is outside the block's domain; namespaces: not visible.
  EXPECT_EQ(probe({"kill", pid}), landlock() ? "EPERM" : "ESRCH");
  EXPECT_EQ(run({probe_path(), "kill", pid}).out, "ok\n");  // control: the same uid outside
  kill(victim, SIGKILL);
  waitpid(victim, nullptr, 0);
}

TEST_P(Backends, HostAbstractSocketCannotBeReached) {
  std::string name = "stackie-landlock-test-" + std::to_string(getpid());
  UnixListener host(std::string(1, '\0') + name);
  // Landlock: socket(AF_UNIX) is refused by the second filter (and ABI 6 scopes abstract
  // sockets as well); namespaces: abstract sockets belong to the network namespace.
  EXPECT_EQ(probe({"abstract-socket", name}), landlock() ? "EACCES" : "ECONNREFUSED");
  EXPECT_EQ(run({probe_path(), "abstract-socket", name}).out, "ok\n");  // control
}

TEST_P(Backends, HostSocketFileCannotBeReached) {
  TempDir dir;
  UnixListener host(dir / "bus");
  // The user's session bus, or stackied's own socket: a landlocked block could find them by
  // path, since Landlock does not mediate connect(2).
  EXPECT_EQ(probe({"unix-connect", dir / "bus"}), landlock() ? "EACCES" : "ENOENT");
  EXPECT_EQ(probe({"unix-connect", dir / "bus"}, {"--ro", dir.path()}),
            landlock() ? "EACCES" : "ok");
  EXPECT_EQ(run({probe_path(), "unix-connect", dir / "bus"}).out, "ok\n");  // control
}

TEST_P(Backends, MonitorMemoryAndEnvironmentAreClosed) {
  if (!landlock()) GTEST_SKIP() << "the namespace lockbox's monitor is outside the pid namespace";
  EXPECT_EQ(probe({"parent-environ"}), "EACCES");
  EXPECT_EQ(run({probe_path(), "parent-environ"}).out, "ok\n");  // control
}

TEST_P(Backends, SeccompNoNewPrivsAndNoCapabilities) {
  EXPECT_EQ(probe({"keyctl"}), "EPERM");
  EXPECT_EQ(probe({"unshare-user"}), "EPERM");
  EXPECT_EQ(probe({"status", "NoNewPrivs"}), "1");
  EXPECT_EQ(probe({"status", "CapEff"}), "0000000000000000");
  EXPECT_EQ(probe({"status", "CapPrm"}), "0000000000000000");
}

TEST_P(Backends, WholeTreeDiesWithTheSandbox) {
  // A setsid'd grandchild keeps stdout open: EOF proves every process of the block is gone.
  Background block({"daemonize"});
  ASSERT_TRUE(block.wait_for("ready")) << block.output();
  // What ends a sandbox whose daemon died: SIGKILL of the monitor (namespaces: the pid
  // namespace goes with pid 1, on its parent-death signal), or the tree kill signal (landlock:
  // its parent-death signal; the subreaper kills every descendant).
  kill(block.pid(), landlock() ? SIGPWR : SIGKILL);
  EXPECT_TRUE(block.eof_within(5000)) << "a process of the block survived";
}

TEST_P(Backends, TheMonitorOutlivesEveryProcessOfItsBlock) {
  // The daemon reports a monitor's exit as its block's, and a restart may then start the next
  // one on the same port and the same files: the old one's processes must all be gone by then.
  // 20 processes of 32 MiB each take a while to die (every page given back).
  Background block({"heavy-tree", "20", "32"});
  ASSERT_TRUE(block.wait_for("ready", 30000)) << block.output();
  kill(block.pid(), linux_sandbox::kTreeKillSignal);  // what the daemon sends to stop a block
  EXPECT_EQ(block.wait_exit(), 128 + SIGKILL);
  EXPECT_TRUE(block.at_eof()) << "a process of the block outlived its monitor";
}

INSTANTIATE_TEST_SUITE_P(SideBySide, Backends, ::testing::Values("namespaces", "landlock"),
                         [](const auto& param_info) { return param_info.param; });

// With user namespaces made unavailable (max_user_namespaces = 0 inside a user namespace of
// the test, which needs no privilege; the test's own uid mapped to itself, so what runs there is
// an ordinary user without capabilities, as on a host that denies user namespaces), the
// lockbox's automatic choice is landlock, and the escape checks that still apply hold: a file
// outside the policy, an undeclared port, a signal to a host process, a host abstract socket.
// The controls (the same action allowed by the policy, or outside the sandbox) run there too.
TEST(LandlockFallback, ChosenWhenUserNamespacesAreDenied) {
  STACKIE_REQUIRE_UNPRIVILEGED();
  if (landlock_abi_version() < 1) GTEST_SKIP() << "this kernel has no Landlock";
  if (!probe_namespace_sandbox().works)
    GTEST_SKIP() << "user namespaces are denied already: nothing to take away";
  TempDir dir;
  std::string secret = dir.write("secret", "s3cret");
  HostListener port_listener;
  ASSERT_GT(port_listener.port, 0);
  std::string port = std::to_string(port_listener.port);
  std::string socket_name = "stackie-fallback-test-" + std::to_string(getpid());
  UnixListener abstract(std::string(1, '\0') + socket_name);
  pid_t victim = fork();
  if (victim == 0) {
    pause();
    _exit(0);
  }
  std::string victim_pid = std::to_string(victim);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  uid_t uid = getuid();
  gid_t gid = getgid();
  pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    auto say = [&](const std::string& text) {
      ssize_t ignored = write(out[1], text.data(), text.size());
      (void)ignored;
    };
    auto put = [](const char* path, const std::string& text) {
      std::ofstream file(path);
      file << text;
      file.flush();
      return file.good();
    };
    if (unshare(CLONE_NEWUSER) != 0) _exit(2);
    put("/proc/self/setgroups", "deny");
    if (!put("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n") ||
        !put("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n") ||
        !put("/proc/sys/user/max_user_namespaces", "0\n"))
      _exit(3);
    say("probe:" + std::string(probe_namespace_sandbox().works ? "works" : "denied") + "\n");
    RunResult choice = run({lockbox_path(), "--print-backend"});
    say("choice:" + choice.out.substr(0, choice.out.find('\n')) + "\n");
    // The lockbox on auto, the probe at its own path; "NAME:OUTPUT exit CODE" per run.
    auto boxed = [&](const std::string& name, const std::vector<std::string>& flags,
                     const std::vector<std::string>& args) {
      std::vector<std::string> argv = {lockbox_path(), "--backend", "auto", "--ro", probe_path()};
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.push_back("--");
      argv.push_back(probe_path());
      argv.insert(argv.end(), args.begin(), args.end());
      RunResult r = run(argv);
      say(name + ":" + trim(r.out) + " exit " + std::to_string(r.exit_code) + "\n");
    };
    boxed("read", {}, {"read", secret});
    boxed("read-allowed", {"--ro", dir.path()}, {"read", secret});
    boxed("keyctl", {}, {"keyctl"});
    boxed("port", {"--net", "localhost"}, {"connect-port", port});
    boxed("port-allowed", {"--net", "localhost", "--allow-connect", port}, {"connect-port", port});
    boxed("kill", {}, {"kill", victim_pid});
    boxed("abstract", {}, {"abstract-socket", socket_name});
    RunResult kill_outside = run({probe_path(), "kill", victim_pid});
    say("kill-outside:" + trim(kill_outside.out) + "\n");
    _exit(0);
  }
  close(out[1]);
  std::string text;
  char buffer[1024];
  ssize_t n;
  while ((n = read(out[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  kill(victim, SIGKILL);
  waitpid(victim, nullptr, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "could not take user namespaces away (status " << status << ")";
  EXPECT_NE(text.find("probe:denied\n"), std::string::npos) << text;
  EXPECT_NE(text.find("choice:landlock\n"), std::string::npos) << text;
  EXPECT_NE(text.find("read:EACCES exit 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("read-allowed:s3cret exit 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("keyctl:EPERM exit 0\n"), std::string::npos) << text;
  if (landlock_abi_version() >= 4) {
    EXPECT_NE(text.find("port:EACCES exit 0\n"), std::string::npos) << text;
    EXPECT_NE(text.find("port-allowed:ok exit 0\n"), std::string::npos) << text;
  }
  if (landlock_abi_version() >= 6) {
    EXPECT_NE(text.find("kill:EPERM exit 0\n"), std::string::npos) << text;
  }
  EXPECT_NE(text.find("kill-outside:ok\n"), std::string::npos) << text;
  EXPECT_NE(text.find("abstract:EACCES exit 0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace stackie::testing
