// A real Server on a real socket in a temp dir, its libuv loop on a thread of its own so the
// test's blocking Clients can talk to it. Everything the server and the handler touch happens on
// the loop thread; the test reaches in only through run_on_loop(). stop() closes the server and
// returns uv_loop_close's status, which every test expects to be 0.
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/uv_handle.h"
#include "ipc/client.h"
#include "ipc/server.h"
#include "support/temp_dir.h"

namespace stackie::ipc::testing {

using stackie::testing::TempDir;

// Methods the tests call:
//   echo {..}                 -> the params back
//   stream {count}            -> count "tick" events {i}, then {count}
//   flood {count, size}       -> count "line" events of size bytes at once, then
//                                {sent, skipped, gone}
//   big {size}                -> {"blob": size bytes}
//   hold                      -> kept unanswered (see held / closed)
//   fail                      -> not_found with data
//   whoami                    -> {uid, pid} of the peer
//   shutdown                  -> {} then Server::close()
//   anything else             -> unknown_method
// Client options that keep every test bounded in time.
ClientOptions quick();

// Polls predicate until it holds or `within` passes.
bool eventually(const std::function<bool()>& predicate,
                std::chrono::milliseconds within = std::chrono::milliseconds(5000));

class TestHandler : public Handler {
 public:
  void on_request(Session session, const Request& request) override;
  void on_close(const Session& session) override;

  Server* server = nullptr;
  // Loop-thread state, read by the test through run_on_loop (or after stop()).
  std::vector<Session> held;
  std::vector<std::uint64_t> closed;            // serials given to on_close
  std::vector<bool> alive_in_on_close;          // session.alive() seen inside on_close
  std::vector<EventOutcome> event_after_close;  // session.event() inside on_close
  std::size_t requests = 0;
};

class ServerFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Listens at socket_path (or path) and starts the loop thread.
  Status start(ServerOptions options = {}, const std::string& path = {});
  // The fd variant (socket activation).
  Status start_fd(int fd, ServerOptions options = {});
  // Closes the server, waits for the loop to end, returns uv_loop_close's status.
  int stop();

  // Runs fn on the loop thread and waits for it.
  void run_on_loop(std::function<void()> fn);

  // A client of socket_path; aborts the test binary when the server is unreachable (every later
  // step would be meaningless).
  Client connect();
  // Another client still gets served: what every garbage test ends with.
  void expect_served();
  // Waits until the server holds `count` sessions of the "hold" method.
  bool wait_held(std::size_t count);

  std::vector<std::string> logs();  // what the log hook got, "warning: ..." / "info: ..."
  std::size_t connection_count();

  TempDir dir;
  std::string socket_path;  // dir/d/stackied.sock (d is created by the server)
  TestHandler handler;
  uv_loop_t loop{};
  std::unique_ptr<Server> server;

 private:
  void start_thread();
  static void on_async(uv_async_t* async);

  UvHandle<uv_async_t> wakeup_;
  std::mutex mutex_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::string> logs_;
  std::thread thread_;
  bool loop_open_ = false;
  bool stopped_ = false;
};

}  // namespace stackie::ipc::testing
