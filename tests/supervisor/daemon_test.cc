// The daemon core: single instance, pid file, state file and restore, SIGTERM, plus the IPC
// handlers over a real socket.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>

#include "base/posix_io.h"
#include "ipc/protocol.h"
#include "ipc/server.h"
#include "loop_fixture.h"
#include "spawn/spawner.h"
#include "supervisor/daemon_core.h"
#include "supervisor/daemon_handlers.h"

namespace stackie {
namespace {

using testing_support::LoopTest;
using testing_support::process_alive;
using testing_support::read_lines;

class DaemonTest : public LoopTest {
 protected:
  void SetUp() override {
    LoopTest::SetUp();
    if (HasFatalFailure()) return;
    home_ = dir_ + "/home";
    passthrough_ = make_passthrough_spawner();
  }
  void TearDown() override {
    daemon_.reset();
    passthrough_.reset();
    close_loop();
  }
  // The "loader" of these tests: the file name picks a hand-built stack.
  Result<std::unique_ptr<Daemon>> open_daemon(bool signals = false) {
    DaemonOptions options;
    options.home = home_;
    options.supervisor.loop = &loop_;
    options.supervisor.passthrough = passthrough_.get();
    options.handle_signals = signals;
    options.loader = [this](const UpRequest& request,
                            const RunningBlocks&) -> Result<ResolvedStack> {
      auto it = stacks_.find(request.file);
      if (it == stacks_.end()) return Error{UV_ENOENT, request.file + ": no such stack file"};
      return it->second;
    };
    options.log = [this](DaemonLogLevel, const std::string& line) { log_.push_back(line); };
    return Daemon::open(options);
  }
  Status up(Daemon& daemon, const std::string& file) {
    std::optional<Status> result;
    UpRequest request{file, dir_, {{"PATH", "/usr/bin:/bin"}}, false, false, "", {}, {}};
    auto started = daemon.up(request, nullptr, [&](Status s) { result = s; });
    if (!started.ok()) return started.take_error();
    EXPECT_TRUE(run_until([&] { return result.has_value(); }));
    return result.value_or(Error{-1, "timeout"});
  }
  int pid_of(Daemon& daemon, const std::string& block) {
    for (const auto& row : daemon.supervisor().ps())
      if (row.block == block && row.state == BlockState::running) return row.pid;
    return 0;
  }

  std::string home_;
  std::unique_ptr<Spawner> passthrough_;
  std::unique_ptr<Daemon> daemon_;
  std::map<std::string, ResolvedStack> stacks_;
  std::vector<std::string> log_;
};

TEST_F(DaemonTest, OnlyOneInstancePerHomeAndThePidFileNamesIt) {
  auto first = open_daemon();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(read_pid_file(home_ + "/stackied.pid"), ::getpid());
  auto second = open_daemon();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, UV_EBUSY);
  EXPECT_NE(second.error().message.find("another stackied is running"), std::string::npos);
  EXPECT_NE(second.error().message.find("pid " + std::to_string(::getpid())), std::string::npos);
  first->reset();
  EXPECT_EQ(::access((home_ + "/stackied.pid").c_str(), F_OK), -1) << "pid file removed";
  auto third = open_daemon();
  EXPECT_TRUE(third.ok()) << "the lock goes with the daemon";
}

TEST_F(DaemonTest, AStalePidFileDoesNotBlockANewDaemon) {
  ::mkdir(home_.c_str(), 0700);
  { std::ofstream(home_ + "/stackied.pid") << "999999\n"; }
  auto daemon = open_daemon();
  ASSERT_TRUE(daemon.ok()) << daemon.error().message;
  EXPECT_EQ(read_pid_file(home_ + "/stackied.pid"), ::getpid());
}

TEST_F(DaemonTest, ARestartedDaemonRestoresTheStacksThatWereUp) {
  stacks_["/proj/a.yml"] = stack("a", {block("web", {"wait"})});
  stacks_["/proj/b.yml"] = stack("b", {block("db", {"wait"})});
  auto first = open_daemon();
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(up(**first, "/proj/a.yml").ok());
  ASSERT_TRUE(up(**first, "/proj/b.yml").ok());
  std::optional<Status> downed;
  (*first)->down("b", [&](Status s) { downed = s; });
  ASSERT_TRUE(run_until([&] { return downed.has_value(); }));
  int old_pid = pid_of(**first, "web");
  ASSERT_GT(old_pid, 0);
  auto records = read_state_file(home_ + "/state.json");
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].name, "a");
  EXPECT_EQ((*records)[0].request.file, "/proj/a.yml");
  EXPECT_EQ((*records)[0].request.cwd, dir_);
  first->reset();  // the daemon goes away; its blocks with it
  run_until([&] { return !process_alive(old_pid); }, 3000);
  EXPECT_FALSE(process_alive(old_pid));

  auto second = open_daemon();
  ASSERT_TRUE(second.ok());
  (*second)->restore();
  ASSERT_TRUE(run_until([&] { return pid_of(**second, "web") > 0; }));
  EXPECT_NE(pid_of(**second, "web"), old_pid);
  EXPECT_FALSE((*second)->supervisor().has_stack("b")) << "a stack taken down stays down";
  daemon_ = std::move(second).value();
}

// Issue 14: nobody watches a restore, so it never runs a block without a sandbox that the
// last interactive `up` ran sandboxed (the stack file may have been edited since).
TEST_F(DaemonTest, ARestoreNeverUnsandboxesABlockTheLastUpDidNot) {
  stacks_["/proj/a.yml"] = stack("a", {block("web", {"wait"})});  // web: unsandboxed
  ::mkdir(home_.c_str(), 0700);
  UpRequest request{"/proj/a.yml", dir_, {}, false, false, "", {}, {}};
  ASSERT_TRUE(write_state_file(home_ + "/state.json", {{"a", request, {}}}).ok());
  auto refused = open_daemon();
  ASSERT_TRUE(refused.ok());
  (*refused)->restore();
  EXPECT_FALSE((*refused)->supervisor().has_stack("a")) << "restored with less isolation";
  std::string said;
  for (const auto& line : log_) said += line + "\n";
  EXPECT_NE(said.find("block 'web' would run without a sandbox, which the last `stackie up` of "
                      "this stack did not show"),
            std::string::npos)
      << said;
  refused->reset();

  // What the last `up` showed (and warned about) is restored as it was.
  ASSERT_TRUE(write_state_file(home_ + "/state.json", {{"a", request, {"web"}}}).ok());
  auto accepted = open_daemon();
  ASSERT_TRUE(accepted.ok());
  (*accepted)->restore();
  ASSERT_TRUE(run_until([&] { return pid_of(**accepted, "web") > 0; }));
  daemon_ = std::move(accepted).value();
}

// Issue 14: state.json keeps of the client's environment only what the stack referenced and
// the STACKIE_* variables, not every token of the user's shell; mode 0600.
TEST_F(DaemonTest, TheStateFileKeepsOnlyTheReferencedEnvironment) {
  auto s = stack("a", {block("web", {"wait"})});
  s.env_referenced = {"PATH", "DB_PASSWORD"};
  stacks_["/proj/a.yml"] = s;
  auto daemon = open_daemon();
  ASSERT_TRUE(daemon.ok());
  std::optional<Status> result;
  UpRequest request{"/proj/a.yml",
                    dir_,
                    {{"PATH", "/usr/bin:/bin"},
                     {"DB_PASSWORD", "kept"},
                     {"SECRET_TOKEN_XYZ", "hunter2"},
                     {"STACKIE_BLOCK_PATH", "/blocks"}},
                    false,
                    false,
                    "",
                    {},
                    {}};
  ASSERT_TRUE((*daemon)->up(request, nullptr, [&](Status st) { result = st; }).ok());
  ASSERT_TRUE(run_until([&] { return result.has_value(); }));
  auto records = read_state_file(home_ + "/state.json");
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(
      (*records)[0].request.env,
      (Env{{"PATH", "/usr/bin:/bin"}, {"DB_PASSWORD", "kept"}, {"STACKIE_BLOCK_PATH", "/blocks"}}));
  EXPECT_EQ((*records)[0].unsandboxed, std::vector<std::string>{"web"});
  struct stat info {};
  ASSERT_EQ(::stat((home_ + "/state.json").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  daemon_ = std::move(daemon).value();
}

TEST_F(DaemonTest, SigtermStopsEveryStackGracefullyAndKeepsTheStateFile) {
  std::string bye = dir_ + "/bye";
  auto polite = block("polite", {"exit-on", "TERM", "0", "wait"});
  stacks_["/proj/a.yml"] = stack("a", {polite});
  auto daemon = open_daemon(true);
  ASSERT_TRUE(daemon.ok());
  ASSERT_TRUE(up(**daemon, "/proj/a.yml").ok());
  int pid = pid_of(**daemon, "polite");
  bool stopped = false;
  (*daemon)->set_on_stopped([&] { stopped = true; });
  ::kill(::getpid(), SIGTERM);
  ASSERT_TRUE(run_until([&] { return stopped; }, 5000));
  EXPECT_FALSE(process_alive(pid));
  EXPECT_FALSE((*daemon)->supervisor().has_stack("a"));
  auto records = read_state_file(home_ + "/state.json");
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 1u) << "the next daemon brings the stack back";
  daemon_ = std::move(daemon).value();
}

TEST_F(DaemonTest, ACorruptStateFileIsSetAsideNotFatal) {
  ::mkdir(home_.c_str(), 0700);
  { std::ofstream(home_ + "/state.json") << "{not json"; }
  auto daemon = open_daemon();
  ASSERT_TRUE(daemon.ok());
  EXPECT_EQ(::access((home_ + "/state.json.bad").c_str(), F_OK), 0);
  EXPECT_TRUE((*daemon)->records().empty());
}

// Issue 14: a state.json.tmp planted as a link to a file of the user's is not written through.
TEST_F(DaemonTest, TheStateFileIsNeverWrittenThroughALink) {
  ::mkdir(home_.c_str(), 0700);
  std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "mine\n";
  ASSERT_EQ(::symlink(victim.c_str(), (home_ + "/state.json.tmp").c_str()), 0);
  UpRequest request{"/proj/a.yml", dir_, {}, false, false, "", {}, {}};
  ASSERT_TRUE(write_state_file(home_ + "/state.json", {{"a", request, {}}}).ok());
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "mine\n");
  auto records = read_state_file(home_ + "/state.json");
  ASSERT_TRUE(records.ok()) << records.error().message;
  EXPECT_EQ(records->size(), 1u);
}

TEST(StateFile, RoundTrips) {
  std::vector<StackRecord> records{
      {"a",
       {"/p/a.yml", "/p", {{"PGPASS", "x\"y"}}, true, false, "other", {"db", "api"}, {"debug"}},
       {}},
      {"b", {"/q/b.yml", "/q", {}, false, true, "", {}, {}}, {"web", "worker"}}};
  auto back = state_from_json(state_to_json(records));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, records);
  EXPECT_FALSE(state_from_json("{\"v\":2,\"stacks\":[]}").ok());
}

// --- the IPC handlers over a real socket ---

class HandlersTest : public DaemonTest {
 protected:
  void TearDown() override {
    if (server_) {
      server_->close();
      run_for(50);
    }
    server_.reset();
    handlers_.reset();
    DaemonTest::TearDown();
  }
  void serve() {
    auto daemon = open_daemon();
    ASSERT_TRUE(daemon.ok());
    daemon_ = std::move(daemon).value();
    handlers_ = std::make_unique<DaemonHandlers>(*daemon_, "/x/stackie-lockbox", 0);
    server_ = std::make_unique<ipc::Server>(&loop_, *handlers_);
    socket_ = dir_ + "/s.sock";
    ASSERT_TRUE(server_->listen(socket_).ok());
    fd_ = stackie::socket_cloexec(AF_UNIX, SOCK_STREAM, true);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, socket_.c_str());
    ASSERT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  void send(int id, const std::string& method, const Json& params) {
    ipc::Request request{id, method, params};
    std::string line = ipc::encode_request(request);
    ASSERT_EQ(::write(fd_, line.data(), line.size()), ssize_t(line.size()));
  }
  // Messages until the reply to `id`.
  std::vector<ipc::ServerMessage> until_reply(int id, int timeout_ms = 10000) {
    std::vector<ipc::ServerMessage> got;
    bool done = false;
    run_until(
        [&] {
          char buf[65536];
          ssize_t n;
          while ((n = ::read(fd_, buf, sizeof buf)) > 0) pending_.append(buf, size_t(n));
          size_t nl;
          while (!done && (nl = pending_.find('\n')) != std::string::npos) {
            auto message = ipc::decode_server_message(pending_.substr(0, nl));
            pending_.erase(0, nl + 1);
            if (!message.ok()) continue;
            if (auto* reply = std::get_if<ipc::Reply>(&*message); reply && reply->id == id)
              done = true;
            got.push_back(std::move(*message));
          }
          return done;
        },
        timeout_ms);
    EXPECT_TRUE(done) << "no reply to request " << id;
    return got;
  }
  static const ipc::Reply* reply_in(const std::vector<ipc::ServerMessage>& messages) {
    for (const auto& m : messages)
      if (auto* r = std::get_if<ipc::Reply>(&m)) return r;
    return nullptr;
  }
  Json up_params(const std::string& file) {
    return Json::object({{"file", file}, {"cwd", dir_}, {"env", Json::object()}});
  }
  // Serves, brings up stack "s" of block `b` (request 1) and waits until `b` logged `line`.
  void up_until_logged(const ResolvedBlock& b, const std::string& line) {
    stacks_["/p/s.yml"] = stack("s", {b});
    serve();
    send(1, "up", up_params("/p/s.yml"));
    ASSERT_TRUE(reply_in(until_reply(1))->ok());
    ASSERT_TRUE(run_until([&] {
      auto tail = daemon_->supervisor().tail("s", b.name, 20);
      for (const auto& l : *tail)
        if (l.text == line) return true;
      return false;
    }));
  }

  std::unique_ptr<DaemonHandlers> handlers_;
  std::unique_ptr<ipc::Server> server_;
  std::string socket_;
  int fd_ = -1;
  std::string pending_;
};

TEST_F(HandlersTest, UpStreamsProgressThenPsShowsTheBlocks) {
  stacks_["/p/s.yml"] = stack("s", {block("db", {"wait"}), block("api", {"wait"})});
  serve();
  send(1, "up", up_params("/p/s.yml"));
  auto messages = until_reply(1);
  const ipc::Reply* reply = reply_in(messages);
  ASSERT_NE(reply, nullptr);
  ASSERT_TRUE(reply->ok()) << reply->error().message;
  EXPECT_EQ(reply->result()["stack"].string_or(""), "s");
  int progress = 0;
  for (const auto& m : messages)
    if (auto* e = std::get_if<ipc::Event>(&m); e && e->name == "progress") ++progress;
  EXPECT_GE(progress, 4) << "starting and running of each block";

  send(2, "ps", Json::object());
  auto messages2 = until_reply(2);
  reply = reply_in(messages2);
  ASSERT_TRUE(reply && reply->ok());
  const auto& rows = reply->result()["blocks"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["state"].string_or(""), "running");
  EXPECT_EQ(rows[0]["sandbox"].string_or(""), "passthrough");
  EXPECT_TRUE(rows[0]["pid"].is_int());

  send(3, "exec", Json::object({{"block", "api"}}));
  auto messages3 = until_reply(3);
  reply = reply_in(messages3);
  ASSERT_TRUE(reply && reply->ok());
  EXPECT_TRUE(reply->result()["join_pid"].is_int());

  send(4, "down", Json::object({{"stack", "s"}}));
  auto messages4 = until_reply(4);
  reply = reply_in(messages4);
  ASSERT_TRUE(reply && reply->ok()) << reply->error().message;
  EXPECT_EQ(reply->result()["stopped"].size(), 2u);
}

TEST_F(HandlersTest, ErrorsHaveTheDocumentedCodes) {
  auto bad = block("bad", {"eprint", "cannot bind", "exit", "2"});
  bad.health.start_period = Milliseconds{200};
  stacks_["/p/bad.yml"] = stack("t", {bad});
  serve();
  send(1, "up", up_params("/p/missing.yml"));
  auto messages1 = until_reply(1);
  const ipc::Reply* reply = reply_in(messages1);
  ASSERT_TRUE(reply && !reply->ok());
  EXPECT_EQ(reply->error().code, "invalid_stack");
  send(2, "up", up_params("/p/bad.yml"));
  auto messages2 = until_reply(2);
  reply = reply_in(messages2);
  ASSERT_TRUE(reply && !reply->ok());
  EXPECT_EQ(reply->error().code, "failed");
  EXPECT_EQ(reply->error().data["block"].string_or(""), "bad");
  ASSERT_GE(reply->error().data["log_tail"].size(), 1u);
  send(3, "status", Json::object({{"block", "nope"}}));
  auto messages3 = until_reply(3);
  reply = reply_in(messages3);
  ASSERT_TRUE(reply && !reply->ok());
  EXPECT_EQ(reply->error().code, "not_found");
  send(4, "frobnicate", Json::object());
  auto messages4 = until_reply(4);
  reply = reply_in(messages4);
  ASSERT_TRUE(reply && !reply->ok());
  EXPECT_EQ(reply->error().code, "unknown_method");
  send(5, "down", Json::object({{"stack", "t"}}));
  auto messages5 = until_reply(5);
  reply = reply_in(messages5);
  ASSERT_TRUE(reply && reply->ok());
}

TEST_F(HandlersTest, LogsTailThenFollowAcrossARestart) {
  std::string starts = dir_ + "/starts";
  auto b = block("api", {"stamp", starts, "print", "hello", "wait"});
  up_until_logged(b, "hello");
  if (HasFatalFailure()) return;
  send(2, "logs", Json::object({{"tail", 20}, {"follow", true}}));
  send(3, "restart", Json::object({{"block", "api"}}));
  auto messages = until_reply(3);
  ASSERT_TRUE(run_until([&] { return read_lines(starts).size() == 2; }));
  // Read the stream for a while: two "hello"s, one from each run.
  std::vector<std::string> texts;
  run_until(
      [&] {
        char buf[65536];
        ssize_t n;
        while ((n = ::read(fd_, buf, sizeof buf)) > 0) pending_.append(buf, size_t(n));
        int hellos = 0;
        for (size_t start = 0, nl; (nl = pending_.find('\n', start)) != std::string::npos;
             start = nl + 1)
          if (pending_.compare(start, nl - start, "") != 0 &&
              pending_.substr(start, nl - start).find("\"text\":\"hello\"") != std::string::npos)
            ++hellos;
        for (const auto& m : messages)
          if (auto* e = std::get_if<ipc::Event>(&m); e && e->data["text"].string_or("") == "hello")
            ++hellos;
        return hellos >= 2;
      },
      5000);
  int hellos = 0;
  for (const auto& m : messages)
    if (auto* e = std::get_if<ipc::Event>(&m); e && e->data["text"].string_or("") == "hello")
      ++hellos;
  for (size_t pos = 0; (pos = pending_.find("\"text\":\"hello\"", pos)) != std::string::npos; ++pos)
    ++hellos;
  EXPECT_GE(hellos, 2);
  EXPECT_EQ(handlers_->follower_count(), 1u);
  ::close(fd_);  // the follower goes with its client
  EXPECT_TRUE(run_until([&] { return handlers_->follower_count() == 0; }, 3000));
}

// A follower that reads the files itself ("files": true, cli/log_file_follow.h) is told where
// they are and where they ended after its tail, and is sent no line after that: the daemon does
// nothing per line for it (issue 25). Its call ends when the stack goes away.
TEST_F(HandlersTest, AFollowerOfTheFilesIsToldWhereTheyEndedAndSentNoLine) {
  auto b = block("api", {"print", "hello", "tick", "20"});
  up_until_logged(b, "hello");
  if (HasFatalFailure()) return;
  send(2, "logs",
       Json::object({{"tail", 1000}, {"follow", true}, {"files", true}, {"batch", "text"}}));
  run_for(300);  // ticks written meanwhile: in the file, and in no event
  send(3, "down", Json::object({{"stack", "s"}}));
  auto messages = until_reply(3);
  auto replied = [&](int id) {
    for (const auto& m : messages)
      if (auto* r = std::get_if<ipc::Reply>(&m); r && r->id == id) return true;
    return false;
  };
  if (!replied(2)) {  // the follow's call ends with the stack: before or after down's reply
    auto rest = until_reply(2);
    messages.insert(messages.end(), rest.begin(), rest.end());
  }
  EXPECT_TRUE(replied(2)) << "the call of a follower of the files ends with its stack";
  std::optional<Json> files;
  int files_events = 0, lines_after = 0;
  bool hello = false;
  std::string last_stdout_line;  // of the tail
  for (const auto& m : messages) {
    auto* e = std::get_if<ipc::Event>(&m);
    if (e == nullptr || e->id != 2) continue;
    if (e->name == "files") {
      files = e->data;
      ++files_events;
    } else if (e->name == "line" && !files) {
      hello = hello || e->data["text"].string_or("") == "hello";
      if (e->data["stream"].string_or("") == "stdout")
        last_stdout_line = e->data["text"].string_or("");
    } else {
      ++lines_after;  // a line, lines or text event after the files one
    }
  }
  EXPECT_TRUE(hello) << "the tail came first";
  ASSERT_EQ(files_events, 1);
  EXPECT_EQ(lines_after, 0);
  const Json& where = *files;
  const std::string directory = where["directory"].string_or("");
  EXPECT_EQ(directory, dir_ + "/storage/logs/" + b.sandbox_id);
  struct stat info {};
  ASSERT_EQ(::stat((directory + "/stdout.log").c_str(), &info), 0);
  EXPECT_EQ(where["stdout"]["inode"].int_or(0), static_cast<int64_t>(info.st_ino));
  // Its birth, where the file system keeps one: an inode alone may be a newer file's.
  EXPECT_EQ(where["stdout"]["born"].int_or(-1),
            static_cast<int64_t>(file_birth_us(AT_FDCWD, (directory + "/stdout.log").c_str())));
  const int64_t ended = where["stdout"]["size"].int_or(0);
  EXPECT_GT(ended, 0);
  EXPECT_LT(ended, static_cast<int64_t>(info.st_size)) << "ticks were written after";
  // The seam: the file up to where it ended is the tail's last line's end, no more, no less.
  std::ifstream in(directory + "/stdout.log");
  std::string upto(static_cast<size_t>(ended), '\0');
  in.read(upto.data(), ended);
  const std::string end_of_tail = " " + last_stdout_line + "\n";
  ASSERT_FALSE(last_stdout_line.empty());
  EXPECT_EQ(upto.substr(upto.size() - end_of_tail.size()), end_of_tail);
  EXPECT_GT(where["stderr"]["inode"].int_or(0), 0) << "stderr.log holds stackie's notes";
}

// When the files cannot be written (a full disk, a directory where stdout.log was), a follower
// of them is told and sent the lines from then on: it would otherwise wait for lines that are
// in no file.
TEST_F(HandlersTest, AFollowerOfFilesThatCannotBeWrittenIsSentTheLines) {
  auto b = block("api", {"tick", "20"});
  stacks_["/p/s.yml"] = stack("s", {b});
  serve();
  send(1, "up", up_params("/p/s.yml"));
  ASSERT_TRUE(reply_in(until_reply(1))->ok());
  send(2, "logs",
       Json::object({{"tail", 0}, {"follow", true}, {"files", true}, {"batch", "text"}}));
  std::vector<ipc::ServerMessage> got;
  auto event_named = [&](const std::string& name) -> const ipc::Event* {
    for (const auto& m : got)
      if (auto* e = std::get_if<ipc::Event>(&m); e && e->id == 2 && e->name == name) return e;
    return nullptr;
  };
  auto read_until = [&](const std::function<bool()>& done) {
    return run_until([&] {
      char buf[65536];
      ssize_t n;
      while ((n = ::read(fd_, buf, sizeof buf)) > 0) pending_.append(buf, size_t(n));
      for (size_t nl; (nl = pending_.find('\n')) != std::string::npos;) {
        auto message = ipc::decode_server_message(pending_.substr(0, nl));
        pending_.erase(0, nl + 1);
        if (message.ok()) got.push_back(std::move(*message));
      }
      return done();
    });
  };
  ASSERT_TRUE(read_until([&] { return event_named("files") != nullptr; }));
  const std::string file = event_named("files")->data["directory"].string_or("") + "/stdout.log";
  ASSERT_TRUE(read_until([&] { return std::filesystem::exists(file); }));
  ASSERT_TRUE(std::filesystem::remove(file));
  ASSERT_TRUE(std::filesystem::create_directory(file));  // no file can be written there now
  ASSERT_TRUE(read_until([&] {
    const ipc::Event* text = event_named("text");
    return event_named("files_failed") != nullptr && text != nullptr &&
           text->data["text"].string_or("").find("tick") != std::string::npos;
  })) << "no files_failed event followed by the lines";
  EXPECT_NE(event_named("files_failed")->data["error"].string_or("").find("stdout.log"),
            std::string::npos);
  send(3, "down", Json::object({{"stack", "s"}}));
  until_reply(3);
}

}  // namespace
}  // namespace stackie
