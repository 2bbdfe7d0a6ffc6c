// The real daemon under many clients and hostile input: 500 concurrent clients each get their
// answer or a clean `busy` refusal; real CLIs racing each other exit 0 or print the refusal; random
// bytes, broken framing and requests with random params of every type for every method each
// get an error reply (or a close after an oversize line), and the same daemon keeps serving.
// (tests/ipc/garbage_test.cc covers the IPC server alone; this covers the daemon's handlers.)
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>

#include "base/posix_io.h"
#include "support/daemon_harness.h"

namespace stackie::fault {
namespace {

// A daemon with a one-block sandboxed stack, so that the handlers have something to look at.
class Hostile : public DaemonHarness {
 protected:
  void bring_up() {
    start_daemon();
    auto reply = up("h", "h:\n  blocks:\n    w:\n      path: .\n      command: [" + helper_ +
                             ", stamp, " + dir_ + "/w.starts, wait]\n");
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    ASSERT_TRUE(reply->ok()) << reply->error().message;
  }
  // The daemon is still there and serves a normal request.
  void expect_serving(pid_t daemon) {
    EXPECT_TRUE(process_alive(daemon)) << "the daemon died";
    auto client = connect_once();
    ASSERT_TRUE(client.ok()) << client.error().message;
    auto rows = ps_blocks(*client);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["state"].string_or(""), "running");
  }
};

TEST_F(Hostile, FiveHundredConcurrentClientsAreServedOrRefusedCleanly) {
  bring_up();
  if (HasFatalFailure()) return;
  pid_t daemon = daemons_.back();
  constexpr int kClients = 500;
  std::atomic<int> served{0}, busy{0};
  std::mutex mutex;
  std::vector<std::string> other;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&] {
      ++ready;
      while (!go) std::this_thread::yield();
      ipc::ClientOptions options;
      options.idle_timeout = 20000ms;
      auto client = ipc::Client::connect(socket_path(), options);
      if (!client.ok()) {
        std::lock_guard lock(mutex);
        other.push_back("connect: " + client.error().message);
        return;
      }
      auto reply = client->call("ps");
      if (reply.ok() && reply->ok() && reply->result()["blocks"].size() == 1) {
        ++served;
      } else if (reply.ok() && !reply->ok() && reply->error().code == ipc::errc::kBusy) {
        ++busy;
      } else {
        std::lock_guard lock(mutex);
        other.push_back(reply.ok() ? reply->error().code + ": " + reply->error().message
                                   : "transport: " + reply.error().message);
      }
    });
  }
  while (ready < kClients) std::this_thread::yield();
  auto t0 = Clock::now();
  go = true;
  for (auto& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(served + busy, kClients);
  EXPECT_GT(served, 0);
  for (std::size_t i = 0; i < other.size() && i < 5; ++i) ADD_FAILURE() << other[i];
  std::printf(
      "[ figures  ] %d concurrent clients: %d served, %d refused busy, %zu other, "
      "in %.2f s\n",
      kClients, served.load(), busy.load(), other.size(), seconds);
  expect_serving(daemon);
}

TEST_F(Hostile, ConcurrentRealCliClientsExitZeroOrPrintTheRefusal) {
  bring_up();
  if (HasFatalFailure()) return;
  pid_t daemon = daemons_.back();
  constexpr int kClis = 100;
  std::vector<pid_t> pids;
  for (int i = 0; i < kClis; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string err = dir_ + "/cli-" + std::to_string(i) + ".err";
      if (!std::freopen(err.c_str(), "w", stderr) || !std::freopen("/dev/null", "w", stdout))
        std::_Exit(126);
      ::setenv("STACKIE_HOME", home_.c_str(), 1);
      ::unsetenv("XDG_RUNTIME_DIR");
      ::execl(stackie_.c_str(), stackie_.c_str(), "ps", "--json", nullptr);
      std::_Exit(127);
    }
    pids.push_back(pid);
  }
  int ok = 0, busy = 0;
  for (int i = 0; i < kClis; ++i) {
    int status = 0;
    ::waitpid(pids[i], &status, 0);
    std::ifstream in(dir_ + "/cli-" + std::to_string(i) + ".err");
    std::string err((std::istreambuf_iterator<char>(in)), {});
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      ++ok;
    } else if (err.find("too many connections") != std::string::npos ||
               err.find("closed to make room") != std::string::npos) {
      // The two busy refusals: refused at the limit, or evicted as idle to make room for a
      // newer client (under this load a CLI can be evicted before its request was read).
      ++busy;
    } else {
      ADD_FAILURE() << "stackie ps: status " << status << ": " << err;
    }
  }
  EXPECT_GT(ok, 0);
  std::printf("[ figures  ] %d concurrent `stackie ps`: %d exit 0, %d busy\n", kClis, ok, busy);
  expect_serving(daemon);
}

// A raw connection: send bytes, then read until the daemon closes, a reply arrived (when
// `until_reply`; events may come first) or nothing came for `quiet`.
struct RawExchange {
  std::string received;
  bool closed = false;
};

bool has_reply(const std::string& received) {
  std::size_t start = 0, end;
  while ((end = received.find('\n', start)) != std::string::npos) {
    auto message =
        ipc::decode_server_message(std::string_view(received).substr(start, end - start));
    if (message.ok() && std::holds_alternative<ipc::Reply>(*message)) return true;
    start = end + 1;
  }
  return false;
}

RawExchange exchange(const std::string& socket_path, const std::string& bytes,
                     std::chrono::milliseconds quiet, bool until_reply = false) {
  RawExchange out;
  int fd = stackie::socket_cloexec(AF_UNIX, SOCK_STREAM);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    out.closed = true;
    return out;
  }
  timeval tv{static_cast<time_t>(quiet.count() / 1000),
             static_cast<suseconds_t>(quiet.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = stackie::send_nosignal(fd, bytes.data() + sent, bytes.size() - sent);
    if (n <= 0) break;  // the daemon may drop us (a line over the limit)
    sent += std::size_t(n);
  }
  char buffer[65536];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      out.closed = true;
      break;
    }
    if (n < 0) break;  // quiet long enough
    out.received.append(buffer, std::size_t(n));
    if (until_reply && has_reply(out.received)) break;
  }
  ::close(fd);
  return out;
}

// Every line the daemon sent must be a well-formed server message.
std::vector<ipc::Reply> replies_in(const std::string& received) {
  std::vector<ipc::Reply> replies;
  std::size_t start = 0;
  while (start < received.size()) {
    std::size_t end = received.find('\n', start);
    if (end == std::string::npos) {
      ADD_FAILURE() << "an unterminated line from the daemon";
      break;
    }
    auto message =
        ipc::decode_server_message(std::string_view(received).substr(start, end - start));
    if (!message.ok()) {
      ADD_FAILURE() << "a malformed line from the daemon: " << message.error().message;
    } else if (auto* reply = std::get_if<ipc::Reply>(&*message)) {
      replies.push_back(*reply);
    }
    start = end + 1;
  }
  return replies;
}

// A random JSON value from the vocabulary handlers read (names, paths, numbers at the edges).
Json random_value(std::mt19937& random, int depth) {
  static const std::vector<std::string> strings = {
      "",     "h",      "w",      "h/w",      "w/h", "/",  "/nonexistent/stack.yml",
      "../x", "stdout", "stderr", "\xc3\xa9", "-1",  "up", std::string(5000, 'a'),
      "/tmp", "h/",     "/w"};
  switch (random() % (depth > 2 ? 6 : 8)) {
    case 0: return Json();
    case 1: return Json(random() % 2 == 0);
    case 2: {
      static const std::int64_t edges[] = {
          0, -1, 1, 10, 1000000, -(std::int64_t{1} << 53), std::int64_t{1} << 53, 2147483648};
      return Json(edges[random() % std::size(edges)]);
    }
    case 3: return Json(random() % 2 ? 1.5 : -1e300);
    case 4:
    case 5: return Json(strings[random() % strings.size()]);
    case 6: {
      Json list = Json::array();
      for (int i = int(random() % 4); i > 0; --i) list.push_back(random_value(random, depth + 1));
      return list;
    }
    default: {
      Json object = Json::object();
      for (int i = int(random() % 4); i > 0; --i)
        object.set(strings[random() % 6], random_value(random, depth + 1));
      return object;
    }
  }
}

TEST_F(Hostile, RandomAndMalformedInputIsAnsweredOrRefusedAndTheDaemonLives) {
  bring_up();
  if (HasFatalFailure()) return;
  pid_t daemon = daemons_.back();
  std::mt19937 random(20261202);

  // 1. Random bytes: every complete line gets an error reply; nothing kills the daemon.
  for (int round = 0; round < 20; ++round) {
    std::string garbage(16 * 1024, '\0');
    for (char& byte : garbage) byte = static_cast<char>(random());
    garbage += "\n";
    auto got = exchange(socket_path(), garbage, 300ms);
    for (const auto& reply : replies_in(got.received)) {
      ASSERT_FALSE(reply.ok());
      EXPECT_TRUE(reply.error().code == ipc::errc::kBadRequest ||
                  reply.error().code == ipc::errc::kTooLarge ||
                  reply.error().code == ipc::errc::kUnsupportedVersion)
          << reply.error().code;
    }
  }

  // 2. Broken framing and envelopes.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json\n", "bad_request"},
      {"{\"v\":1,\"id\":1}\n", "bad_request"},
      {"{\"v\":2,\"id\":1,\"method\":\"ps\"}\n", "unsupported_version"},
      {"{\"v\":1,\"id\":\"one\",\"method\":\"ps\"}\n", "bad_request"},
      {"{\"v\":1,\"id\":1,\"method\":\"ps\",\"params\":[]}\n", "bad_request"},
      {"{\"v\":1,\"id\":1,\"method\":\"no.such\"}\n", "unknown_method"},
      {"{\"v\":1,\"id\":1,\"method\":\"ps\",\"method\":\"up\"}\n", "bad_request"},
      {std::string(100, '[') + "\n", "bad_request"},
      {"{\"v\":1,\"id\":1,\"method\":\"status\",\"params\":{\"block\":\"\xff\xfe\"}}\n",
       "bad_request"},
      {std::string((1 << 20) + 10, 'x') + "\n", "too_large"},
  };
  for (const auto& [bytes, code] : cases) {
    auto got = exchange(socket_path(), bytes, 5000ms, true);
    auto replies = replies_in(got.received);
    ASSERT_EQ(replies.size(), 1u) << "for " << bytes.substr(0, 60);
    ASSERT_FALSE(replies[0].ok());
    EXPECT_EQ(replies[0].error().code, code) << "for " << bytes.substr(0, 60);
  }
  // Half a request, then gone.
  exchange(socket_path(), "{\"v\":1,\"id\":1,\"meth", 50ms);

  // 3. Well-framed requests with random params for every method (but daemon.stop): each gets
  // exactly one reply with its id. The stack may go down on the way; that is allowed.
  const std::vector<std::string> methods = {"ps",    "status",        "logs",    "up",
                                            "down",  "exec",          "restart", "stop",
                                            "start", "daemon.status", "bogus"};
  int answered = 0, errors = 0;
  for (int i = 0; i < 600; ++i) {
    ipc::Request request;
    request.id = i + 1;
    request.method = methods[random() % methods.size()];
    request.params = Json::object();
    for (int k = int(random() % 5); k > 0; --k) {
      static const char* keys[] = {"block", "blocks", "stack",   "file",       "cwd",  "env",
                                   "tail",  "since",  "streams", "no_sandbox", "wait", "ephemeral"};
      request.params.set(keys[random() % std::size(keys)], random_value(random, 0));
    }
    request.params.set("follow", false);  // a follow request is answered only at its end
    auto got = exchange(socket_path(), ipc::encode_request(request), 5000ms, true);
    auto replies = replies_in(got.received);
    ASSERT_EQ(replies.size(), 1u) << ipc::encode_request(request);
    EXPECT_EQ(replies[0].id, request.id);
    ++answered;
    if (!replies[0].ok()) ++errors;
    ASSERT_TRUE(process_alive(daemon)) << "died on " << ipc::encode_request(request);
  }
  std::printf(
      "[ figures  ] 20 x 16 KiB random bytes, %zu malformed envelopes, %d random-param "
      "requests (%d errors): daemon alive\n",
      cases.size(), answered, errors);
  EXPECT_TRUE(process_alive(daemon));
  auto client = connect_once();
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto status = client->call("daemon.status");
  ASSERT_TRUE(status.ok() && status->ok());
  EXPECT_EQ(status->result()["pid"].int_or(0), daemon) << "the same daemon still serves";
}

}  // namespace
}  // namespace stackie::fault
