// The cgroup v2 enforcement of a block's limits (spawn/cgroup_tree.h, stackie-lockbox
// --cgroup-fd), the way stackied uses it: take over the delegated cgroup this test runs in,
// make a block cgroup with limits, run hostile probes in the lockbox inside it. Runs only where
// this process's cgroup is delegated to its user (systemd-run --user -p Delegate=yes --scope
// ...); elsewhere it skips and says what is missing.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/cgroup_v2.h"
#include "lockbox_harness.h"
#include "spawn/cgroup_tree.h"
#include "support/proc_file.h"
#include "support/temp_dir.h"

extern char** environ;

namespace stackie::testing {
namespace {

// cgroup files are read like /proc files: with read(2), whole (support/proc_file.h).
std::string read_text(const std::string& path) {
  return testing_proc::read_proc_file(path);
}

// stackie-lockbox --cgroup-fd 3 [FLAGS] -- /probe ARGS, stdout readable; killed at the end.
struct CgroupRun {
  pid_t pid = -1;
  int out = -1;
  std::string seen;
  CgroupRun(int cgroup_fd, const std::vector<std::string>& probe_args) {
    int pipe_fds[2];
    pipe2(pipe_fds, O_CLOEXEC);
    std::vector<std::string> argv = {lockbox_path()};
    if (!current_backend().empty()) argv.insert(argv.end(), {"--backend", current_backend()});
    std::string bind = landlock_backend() ? probe_path() : probe_path() + ":/probe";
    argv.insert(argv.end(), {"--ro", bind, "--cgroup-fd", "3", "--", probe_inside()});
    argv.insert(argv.end(), probe_args.begin(), probe_args.end());
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, cgroup_fd, 3);
    posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fds[1]);
    out = pipe_fds[0];
  }
  ~CgroupRun() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    close(out);
  }
  bool wait_line(int timeout_ms = 20000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (seen.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return false;
      pollfd p{out, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buffer[256];
      ssize_t n = read(out, buffer, sizeof buffer);
      if (n <= 0) return false;
      seen.append(buffer, static_cast<size_t>(n));
    }
    return true;
  }
  int wait_exit() {
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

class LockboxCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    STACKIE_REQUIRE_UNPRIVILEGED();
    auto delegated = find_delegated_cgroup();
    if (!delegated.ok())
      GTEST_SKIP() << "needs a cgroup v2 directory delegated to this user with the pids and "
                      "memory controllers (systemd-run --user -p Delegate=yes --scope ...): "
                   << delegated.error().message;
    // take_over moves this process into a leaf and enables the controllers for the children,
    // which cgroup v2 refuses while another process shares the directory.
    std::istringstream procs(read_text(delegated->dir + "/cgroup.procs"));
    for (pid_t pid; procs >> pid;)
      if (pid != getpid())
        GTEST_SKIP() << "cgroup " << delegated->dir << " holds other processes (pid " << pid
                     << "); run this test in a unit or scope of its own";
    auto tree = CgroupTree::take_over(*delegated);
    ASSERT_TRUE(tree.ok()) << tree.error().message;
    tree_ = std::move(*tree);
  }
  std::unique_ptr<CgroupTree> tree_;
};

TEST_F(LockboxCgroup, AForkBombIsHeldAtPidsMaxAndKilledWhole) {
  ResourceLimits limits;
  limits.pids = 32;
  limits.memory_bytes = 256ull << 20;
  auto cgroup = tree_->make_block("cgroup-test-bomb", limits);
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().message;
  EXPECT_EQ(read_text((*cgroup)->dir() + "/pids.max"), "32\n");
  CgroupRun bomb((*cgroup)->fd(), {"fork-bomb", "300"});
  ASSERT_TRUE(bomb.wait_line()) << bomb.seen;
  EXPECT_NE(bomb.seen.find(" EAGAIN"), std::string::npos) << bomb.seen;
  auto usage = (*cgroup)->usage();
  ASSERT_TRUE(usage.ok()) << usage.error().message;
  EXPECT_GT(usage->pids, 16);
  EXPECT_LE(usage->pids, 32);
  EXPECT_GT(usage->pids_refused, 0u);
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0) << "the test could not fork";
  waitpid(child, nullptr, 0);
  // cgroup.kill takes every process of the block, the monitor included.
  ASSERT_TRUE((*cgroup)->kill_all().ok());
  EXPECT_EQ(bomb.wait_exit(), 128 + SIGKILL);
  bool emptied = false;
  for (int i = 0; i < 100 && !emptied; ++i) {
    emptied = read_text((*cgroup)->dir() + "/cgroup.procs").empty();
    if (!emptied) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(emptied) << read_text((*cgroup)->dir() + "/cgroup.procs");
  EXPECT_TRUE((*cgroup)->remove());
}

TEST_F(LockboxCgroup, AMemoryBombIsKilledAtMemoryMax) {
  ResourceLimits limits;
  limits.memory_bytes = 64ull << 20;
  auto cgroup = tree_->make_block("cgroup-test-hog", limits);
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().message;
  CgroupRun hog((*cgroup)->fd(), {"alloc", "512"});
  // No RLIMIT_DATA under a cgroup: the allocation succeeds and touching it hits memory.max.
  int code = hog.wait_exit();
  auto usage = (*cgroup)->usage();
  ASSERT_TRUE(usage.ok()) << usage.error().message;
  EXPECT_GE(usage->oom_kills, 1u) << "exit " << code << ", output " << hog.seen;
  EXPECT_EQ(hog.seen.find("ok"), std::string::npos) << "512MiB fit under a 64MiB memory.max";
  EXPECT_TRUE((*cgroup)->kill_all().ok());
  (*cgroup)->remove();
}

// The values CgroupTree writes, on a directory that stands in for a delegated cgroup (plain
// files where cgroupfs has its own): runs everywhere, unlike the tests above.
TEST(CgroupTreeFiles, TakeOverAndBlockLimitsWriteTheExpectedValues) {
  TempDir temp("stackie-cgroup");
  ASSERT_TRUE(temp.ok());
  std::string root = temp.path();
  std::string block = root + "/block-demo-api";
  ASSERT_EQ(mkdir((root + "/daemon").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(block.c_str(), 0755), 0);
  for (const std::string& file :
       {root + "/cgroup.subtree_control", root + "/daemon/cgroup.procs", block + "/cgroup.procs",
        block + "/pids.max", block + "/memory.max", block + "/memory.swap.max", block + "/cpu.max"})
    std::ofstream(file).flush();
  DelegatedCgroup delegated{root, {"cpu", "memory", "pids"}};
  auto tree = CgroupTree::take_over(delegated);
  ASSERT_TRUE(tree.ok()) << tree.error().message;
  EXPECT_EQ(read_text(root + "/daemon/cgroup.procs"), std::to_string(getpid()));
  EXPECT_EQ(read_text(root + "/cgroup.subtree_control"), "+pids +memory +cpu");

  ResourceLimits limits{512ull << 20, 100, 1500, 0, true};
  auto made = (*tree)->make_block("demo-api", limits);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ((*made)->dir(), block);
  EXPECT_EQ(read_text(block + "/pids.max"), "100");
  EXPECT_EQ(read_text(block + "/memory.max"), std::to_string(512ull << 20));
  EXPECT_EQ(read_text(block + "/memory.swap.max"), "0");
  EXPECT_EQ(read_text(block + "/cpu.max"), "150000 100000");  // 1.5 CPUs of each 100 ms

  auto unlimited = (*tree)->make_block("demo-api", ResourceLimits{});
  ASSERT_TRUE(unlimited.ok()) << unlimited.error().message;
  EXPECT_EQ(read_text(block + "/pids.max"), "max");
  EXPECT_EQ(read_text(block + "/memory.max"), "max");
  EXPECT_EQ(read_text(block + "/cpu.max"), "max 100000");
}

}  // namespace
}  // namespace stackie::testing
