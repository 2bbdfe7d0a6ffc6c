// Hostile blocks against their `limits` (issue 14 item 7), through the real daemon: a fork bomb
// stays at its pids limit while the user and the other blocks still fork and start, and a
// memory bomb fails (rlimits) or is killed (cgroup) at its memory limit. Whichever enforcement
// the daemon found (stackied(8) LIMITS; in CI, rlimits), `status` names it and shows the limits.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "support/daemon_harness.h"

namespace stackie::fault {
namespace {

using LimitsTest = DaemonHarness;
using testing_proc::processes_in_user_ns_of;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Json status_of(ipc::Client& client, const std::string& block) {
  auto reply = client.call("status", Json::object({{"block", block}}));
  EXPECT_TRUE(reply.ok() && reply->ok()) << (reply.ok() ? "" : reply.error().message);
  return reply.ok() && reply->ok() ? reply->result()["block"] : Json();
}

TEST_F(LimitsTest, AForkBombStaysAtItsPidsLimitAndTheRestStillForks) {
  start_daemon();
  ipc::Client client = connect();
  auto reply = up("bombs",
                  // No `path: .` here or for the calm stack: both stack files are in this
                  // directory, and a block that could write one refuses the other stack's up
                  // (supervisor/stack_neighbours.h).
                  "bombs:\n  blocks:\n    bomb:\n"
                  "      limits: {pids: 32}\n"
                  "      command: [" +
                      helper_ + ", fork-bomb, 300, wait]\n");
  ASSERT_TRUE(reply.ok() && reply->ok())
      << (reply.ok() ? reply->error().message : reply.error().message);
  std::string out = home_ + "/storage/logs/bombs-bomb/stdout.log";
  ASSERT_TRUE(wait_for([&] { return read_text(out).find("forked") != std::string::npos; }, 20s))
      << "the bomb never reported: " << read_text(out);
  EXPECT_NE(read_text(out).find(" EAGAIN"), std::string::npos)
      << "every fork of the bomb succeeded: " << read_text(out);

  Json status = status_of(client, "bomb");
  ASSERT_TRUE(status["pid"].is_int())
      << "the bomb is not running: " << status["state"].string_or("");
  int inside = processes_in_user_ns_of(static_cast<int>(status["pid"].as_int()));
  EXPECT_GT(inside, 16) << "the bomb did not get going";
  EXPECT_LE(inside, 32) << "processes of the bomb's sandbox";
  const Json& limits = status["limits"];
  EXPECT_EQ(limits["pids"].int_or(0), 32);
  EXPECT_EQ(limits["memory"].int_or(0), int64_t{2} << 30) << "the default memory limit";
  std::string enforcement = limits["enforcement"].string_or("");
  EXPECT_TRUE(enforcement.rfind("cgroup v2 (", 0) == 0 || enforcement.rfind("rlimits (", 0) == 0)
      << enforcement;
  if (enforcement.rfind("cgroup", 0) == 0) {
    EXPECT_LE(limits["usage"]["pids"].int_or(99), 32);
    EXPECT_GT(limits["usage"]["pids_refused"].int_or(0), 0);
  }

  // The user still forks, and another block of the same user starts while the bomb holds.
  pid_t child = ::fork();
  if (child == 0) ::_exit(7);
  ASSERT_GT(child, 0) << "the test could not fork: " << std::strerror(errno);
  int wstatus = 0;
  ::waitpid(child, &wstatus, 0);
  EXPECT_EQ(WEXITSTATUS(wstatus), 7);
  reply = up("calm",
             "calm:\n  blocks:\n    neighbour:\n"
             "      command: [" +
                 helper_ + ", print, started, wait]\n");
  ASSERT_TRUE(reply.ok() && reply->ok())
      << (reply.ok() ? reply->error().message : reply.error().message);
  std::string calm = home_ + "/storage/logs/calm-neighbour/stdout.log";
  EXPECT_TRUE(wait_for([&] { return read_text(calm).find("started") != std::string::npos; }, 20s))
      << "a block of the same user could not start next to the bomb";
  std::printf("[ figures  ] bomb: %s", read_text(out).c_str());
  std::printf("[ figures  ] %d processes in its sandbox; enforcement: %s\n", inside,
              enforcement.c_str());
}

// python3, not blockhelper: under rlimits a given memory limit is RLIMIT_DATA, under which no
// sanitizer-built program starts (blockhelper is one in `scripts/test --sanitize`).
// The sanitize run builds stackie-lockbox with ASan: its runtime reserves terabytes of address
// space, which any RLIMIT_DATA refuses, so the rlimit case runs in the normal build only.
#ifdef __SANITIZE_ADDRESS__
constexpr bool kLockboxUnderAsan = true;
#else
constexpr bool kLockboxUnderAsan = false;
#endif

TEST_F(LimitsTest, AMemoryBombFailsOrIsKilledAtItsMemoryLimit) {
  if (kLockboxUnderAsan)
    GTEST_SKIP() << "an ASan-built stackie-lockbox cannot run under RLIMIT_DATA; the normal "
                    "build runs this test";
  start_daemon();
  ipc::Client client = connect();
  auto reply = up("hogs",
                  "hogs:\n  blocks:\n    hog:\n      path: .\n      restart: \"no\"\n"
                  "      limits: {memory: 64MiB}\n"
                  "      command: [/usr/bin/python3, -c, \"b = b'x' * (512 << 20); "
                  "print('alloc ok', flush=True); import time; time.sleep(60)\"]\n");
  ASSERT_TRUE(reply.ok() && reply->ok())
      << (reply.ok() ? reply->error().message : reply.error().message);
  std::string out = home_ + "/storage/logs/hogs-hog/stdout.log";
  std::string err = home_ + "/storage/logs/hogs-hog/stderr.log";
  Json status;
  // rlimits: the allocation fails (MemoryError) and the block exits 1; a cgroup: the kernel
  // kills it (OOM) and it exits by SIGKILL.
  bool bounded = wait_for(
      [&] {
        status = status_of(client, "hog");
        return read_text(err).find("MemoryError") != std::string::npos ||
               status["last_exit"]["signal"].int_or(0) == SIGKILL;
      },
      20s);
  EXPECT_TRUE(bounded) << "512MiB under a 64MiB limit: " << read_text(out) << read_text(err)
                       << " / state " << status["state"].string_or("?");
  EXPECT_EQ(read_text(out).find("alloc ok"), std::string::npos) << "the allocation succeeded";
  EXPECT_EQ(status["limits"]["memory"].int_or(0), int64_t{64} << 20);
  EXPECT_EQ(status["limits"]["shm"].int_or(0), int64_t{64} << 20);
}

}  // namespace
}  // namespace stackie::fault
