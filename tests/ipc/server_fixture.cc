#include "server_fixture.h"

#include <chrono>
#include <csignal>

namespace stackie::ipc::testing {

using namespace std::chrono_literals;

ClientOptions quick() {
  ClientOptions options;
  options.connect_timeout = 2000ms;
  options.idle_timeout = 5000ms;
  return options;
}

bool eventually(const std::function<bool()>& predicate, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return predicate();
}

void TestHandler::on_request(Session session, const Request& request) {
  ++requests;
  const Json& params = request.params;
  if (request.method == "echo") {
    session.reply(params);
  } else if (request.method == "stream") {
    const std::int64_t count = params["count"].int_or(0);
    for (std::int64_t i = 0; i < count; ++i) session.event("tick", Json::object({{"i", i}}));
    session.reply(Json::object({{"count", count}}));
  } else if (request.method == "flood") {
    const std::int64_t count = params["count"].int_or(0);
    const std::string text(static_cast<std::size_t>(params["size"].int_or(100)), 'x');
    std::int64_t sent = 0, skipped = 0, gone = 0;
    for (std::int64_t i = 0; i < count; ++i) {
      switch (session.event("line", Json::object({{"i", i}, {"text", text}}))) {
        case EventOutcome::sent: ++sent; break;
        case EventOutcome::skipped: ++skipped; break;
        case EventOutcome::gone: ++gone; break;
      }
    }
    session.reply(Json::object({{"sent", sent}, {"skipped", skipped}, {"gone", gone}}));
  } else if (request.method == "flood_while_taken") {
    // As "flood", but the way `logs -f` skips a whole batch: asked once, and what the client
    // cannot take now is counted as skipped without being built.
    const std::int64_t count = params["count"].int_or(0);
    const std::string text(static_cast<std::size_t>(params["size"].int_or(100)), 'x');
    std::int64_t sent = 0, skipped = 0;
    bool refused = false;
    for (std::int64_t i = 0; i < count; ++i) {
      if (!session.takes_events()) {
        refused = true;
        session.skip_events(static_cast<std::uint64_t>(count - i));
        skipped += count - i;
        break;
      }
      if (session.event("line", Json::object({{"i", i}, {"text", text}})) == EventOutcome::sent)
        ++sent;
      else
        ++skipped;
    }
    session.reply(Json::object({{"sent", sent}, {"skipped", skipped}, {"refused", refused}}));
    session.skip_events(5);  // answered: nothing more is counted nor told
  } else if (request.method == "big") {
    session.reply(Json::object(
        {{"blob", std::string(static_cast<std::size_t>(params["size"].int_or(0)), 'b')}}));
  } else if (request.method == "hold") {
    held.push_back(session);
  } else if (request.method == "fail") {
    session.fail(errc::kNotFound, "no block 'ghost'", Json::object({{"block", "ghost"}}));
  } else if (request.method == "whoami") {
    session.reply(Json::object({{"uid", session.peer().uid}, {"pid", session.peer().pid}}));
  } else if (request.method == "shutdown") {
    session.reply(Json::object());
    if (server) server->close();
  } else {
    session.fail(errc::kUnknownMethod, "unknown method '" + request.method + "'");
  }
}

void TestHandler::on_close(const Session& session) {
  closed.push_back(session.serial());
  alive_in_on_close.push_back(session.alive());
  Session copy = session;
  event_after_close.push_back(copy.event("late", Json::object()));
  copy.reply(Json::object());  // must be a harmless no-op
}

void ServerFixture::SetUp() {
  // As in stackied (stackied_main.cc): the server writes with libuv, and a client that closed
  // first must be an EPIPE for the server, not a SIGPIPE that kills the test executable (the
  // ipc test died of it once on a loaded machine).
  std::signal(SIGPIPE, SIG_IGN);
  ASSERT_TRUE(dir.ok()) << "cannot create a temporary directory";
  socket_path = dir / "run/stackied.sock";
  ASSERT_EQ(uv_loop_init(&loop), 0);
  loop_open_ = true;
}

void ServerFixture::TearDown() {
  if (loop_open_ && !stopped_) {
    EXPECT_EQ(stop(), 0) << "the loop did not close cleanly";
  }
}

Status ServerFixture::start(ServerOptions options, const std::string& path) {
  options.log = [this](LogLevel level, std::string_view message) {
    std::lock_guard lock(mutex_);
    logs_.push_back((level == LogLevel::warning ? "warning: " : "info: ") + std::string(message));
  };
  server = std::make_unique<Server>(&loop, handler, std::move(options));
  handler.server = server.get();
  STACKIE_TRY(server->listen(path.empty() ? socket_path : path));
  start_thread();
  return {};
}

Status ServerFixture::start_fd(int fd, ServerOptions options) {
  options.log = [this](LogLevel level, std::string_view message) {
    std::lock_guard lock(mutex_);
    logs_.push_back((level == LogLevel::warning ? "warning: " : "info: ") + std::string(message));
  };
  server = std::make_unique<Server>(&loop, handler, std::move(options));
  handler.server = server.get();
  STACKIE_TRY(server->listen_fd(fd));
  start_thread();
  return {};
}

void ServerFixture::start_thread() {
  const int status =
      wakeup_.init([&](uv_async_t* async) { return uv_async_init(&loop, async, on_async); }, this);
  ASSERT_EQ(status, 0);
  thread_ = std::thread([this] { uv_run(&loop, UV_RUN_DEFAULT); });
}

void ServerFixture::on_async(uv_async_t* async) {
  auto* fixture = static_cast<ServerFixture*>(async->data);
  if (!fixture) return;
  std::deque<std::function<void()>> tasks;
  {
    std::lock_guard lock(fixture->mutex_);
    tasks.swap(fixture->tasks_);
  }
  for (auto& task : tasks) task();
}

void ServerFixture::run_on_loop(std::function<void()> fn) {
  if (!thread_.joinable()) {
    fn();
    return;
  }
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back([fn = std::move(fn), done] {
      fn();
      done->set_value();
    });
  }
  uv_async_send(wakeup_.get());
  if (finished.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
    ADD_FAILURE() << "the loop thread did not run a task within 10 s";
  else
    finished.get();
}

int ServerFixture::stop() {
  stopped_ = true;
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back([this] { server->close([this] { wakeup_.close(); }); });
    }
    uv_async_send(wakeup_.get());
    thread_.join();
  }
  wakeup_.close();
  server.reset();
  handler.server = nullptr;
  uv_run(&loop, UV_RUN_DEFAULT);  // the close callbacks of whatever the destructor closed
  loop_open_ = false;
  return uv_loop_close(&loop);
}

std::vector<std::string> ServerFixture::logs() {
  std::lock_guard lock(mutex_);
  return logs_;
}

std::size_t ServerFixture::connection_count() {
  std::size_t count = 0;
  run_on_loop([&] { count = server ? server->connection_count() : 0; });
  return count;
}

}  // namespace stackie::ipc::testing

namespace stackie::ipc::testing {

Client ServerFixture::connect() {
  auto client = Client::connect(socket_path, quick());
  EXPECT_TRUE(client.ok()) << (client.ok() ? "" : client.error().message);
  if (!client.ok()) std::abort();
  return std::move(client).value();
}

void ServerFixture::expect_served() {
  Client other = connect();
  auto reply = other.call("echo", Json::object({{"still", "here"}}));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(reply->ok());
  EXPECT_EQ(reply->result()["still"].as_string(), "here");
}

bool ServerFixture::wait_held(std::size_t count) {
  return eventually([&] {
    std::size_t held = 0;
    run_on_loop([&] { held = handler.held.size(); });
    return held == count;
  });
}

}  // namespace stackie::ipc::testing
