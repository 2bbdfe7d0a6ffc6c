// Shared scaffolding of the loop tests: a private libuv loop that must close cleanly at the
// end of every test, a scratch directory, the helper binary, and hand-built stacks.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "stack/stack_model.h"
#include "support/proc_file.h"
#include "support/temp_dir.h"

namespace stackie::testing_support {

using testing_proc::read_proc_file;

inline std::string helper_path() {
  const char* path = std::getenv("STACKIE_BLOCKHELPER");
  return path ? path : "";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline bool process_alive(int pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0) return false;
  // A zombie is dead for our purposes.
  std::string content = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  size_t close_paren = content.rfind(')');
  return close_paren == std::string::npos || content.size() < close_paren + 3 ||
         content[close_paren + 2] != 'Z';
}

// A port nobody listens on right now.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class LoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    ASSERT_TRUE(temp_.ok());
    dir_ = temp_.path();
    helper_ = helper_path();
    ASSERT_FALSE(helper_.empty()) << "STACKIE_BLOCKHELPER is not set (meson sets it)";
  }

  // Subclasses destroy whatever owns handles first, then call this.
  void close_loop() {
    // Let close callbacks and exits of killed children finish.
    for (int i = 0; i < 200 && uv_loop_alive(&loop_); ++i)
      uv_run(&loop_, UV_RUN_NOWAIT), usleep(5000);
    int open_handles = 0;
    uv_walk(
        &loop_,
        [](uv_handle_t* h, void* arg) {
          ++*static_cast<int*>(arg);
          ADD_FAILURE() << "handle left open: " << uv_handle_type_name(uv_handle_get_type(h));
          if (!uv_is_closing(h)) uv_close(h, nullptr);
        },
        &open_handles);
    uv_run(&loop_, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "the loop did not close cleanly";
  }

  // Run the loop until `done()` or the deadline; true when done.
  bool run_until(const std::function<bool()>& done, int timeout_ms = 10000) {
    uv_timer_t tick;
    uv_timer_init(&loop_, &tick);
    uv_timer_start(
        &tick, [](uv_timer_t*) {}, 5, 5);  // wakes RUN_ONCE; the test's own timer
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    bool ok = done();
    while (!ok && std::chrono::steady_clock::now() < deadline) {
      uv_run(&loop_, UV_RUN_ONCE);
      ok = done();
    }
    uv_close(reinterpret_cast<uv_handle_t*>(&tick), nullptr);
    uv_run(&loop_, UV_RUN_NOWAIT);
    return ok;
  }

  void run_for(int ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    run_until([&] { return std::chrono::steady_clock::now() >= until; }, ms + 1000);
  }

  ResolvedBlock block(const std::string& name, std::vector<std::string> actions) {
    ResolvedBlock b;
    b.name = name;
    b.sandbox_id = "test-" + name;
    b.command = {helper_};
    b.command.insert(b.command.end(), actions.begin(), actions.end());
    b.sandboxed = false;
    b.restart = RestartPolicy::no;
    b.stop_timeout = Milliseconds{2000};
    b.policy.name = b.sandbox_id;
    b.policy.environment = {{"PATH", "/usr/bin:/bin"}};
    return b;
  }

  ResolvedStack stack(const std::string& name, std::vector<ResolvedBlock> blocks) {
    ResolvedStack s;
    s.name = name;
    s.file = dir_ + "/stackie-stack.yml";
    s.storage_root = dir_ + "/storage";
    s.blocks = std::move(blocks);
    return s;
  }

  uv_loop_t loop_{};
  testing::TempDir temp_{"stackie-sv"};
  std::string dir_;  // temp_'s path
  std::string helper_;
};

}  // namespace stackie::testing_support
