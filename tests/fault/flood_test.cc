// A block floods its output as fast as the daemon takes it, while two `logs -f` followers are
// stuck (a raw client that never reads its socket, and the real CLI writing into a pipe nobody
// reads). Meanwhile the daemon answers every `ps`, a second block's health checks keep running,
// the flood keeps moving and the daemon's memory stays flat. Latencies are printed as figures,
// not asserted: an upper bound on time fails on a loaded runner without a bug (bench/ measures
// them on a quiet machine).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>

#include "base/posix_io.h"
#include "support/daemon_harness.h"

namespace stackie::fault {
namespace {

using FloodTest = DaemonHarness;

constexpr long kFloodLines = 987654321;  // never reached: down ends it; also our token
constexpr int kHealthIntervalMs = 200;

#if defined(__SANITIZE_ADDRESS__)
// Under ASan (scripts/test --sanitize) freed memory waits in a quarantine (256 MiB by default):
// the memory budget belongs to the real build and the normal run checks it.
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

long rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Bytes written so far by the processes whose command line holds `token` (/proc/PID/io).
long long bytes_written(const std::string& token) {
  long long total = 0;
  for (int pid : processes_mentioning(token)) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/io");
    std::string key;
    long long value;
    while (in >> key >> value)
      if (key == "wchar:") total += value;
  }
  return total;
}

// A raw client that asks to follow `block` and then never reads: the socket's buffers fill.
int stuck_follower(const std::string& socket_path, const std::string& block) {
  int fd = stackie::socket_cloexec(AF_UNIX, SOCK_STREAM);
  int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  std::string request = "{\"v\":1,\"id\":1,\"method\":\"logs\",\"params\":{\"blocks\":[\"" + block +
                        "\"],\"tail\":0,\"follow\":true}}\n";
  if (::write(fd, request.data(), request.size()) != ssize_t(request.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST_F(FloodTest, PsStaysFastAndHealthChecksOnScheduleWhileAFollowerIsStuck) {
  pid_t daemon = start_daemon();
  const std::string checks = dir_ + "/steady.checks";
  std::string yaml =
      "flood:\n  blocks:\n"
      "    flood:\n      path: .\n      command: [" +
      helper_ + ", flood, " + std::to_string(kFloodLines) +
      ", wait]\n"
      "    steady:\n      path: .\n      command: [" +
      helper_ +
      ", wait]\n"
      "      health:\n        exec: [" +
      helper_ + ", stamp, " + checks +
      "]\n"
      "        interval: " +
      std::to_string(kHealthIntervalMs) +
      "ms\n"
      "        timeout: 2s\n";
  auto reply = up("flood", yaml);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(reply->ok()) << reply->error().message;

  int raw = stuck_follower(socket_path(), "flood");
  ASSERT_GE(raw, 0) << "raw follower could not connect";
  int pipe_fds[2];
  ASSERT_EQ(stackie::pipe_cloexec(pipe_fds), 0);
  pid_t cli = ::fork();
  if (cli == 0) {
    ::dup2(pipe_fds[1], 1);
    ::setenv("STACKIE_HOME", home_.c_str(), 1);
    ::unsetenv("XDG_RUNTIME_DIR");
    ::execl(stackie_.c_str(), stackie_.c_str(), "logs", "-f", "flood", nullptr);
    std::_Exit(127);
  }
  ::close(pipe_fds[1]);             // we keep the read end and never read it
  std::this_thread::sleep_for(1s);  // the followers' buffers fill up

  const long rss_before = rss_kib(daemon);
  const std::string token = std::to_string(kFloodLines);
  const long long written_before = bytes_written(token);
  const auto window_start = Clock::now();
  std::vector<double> latencies;
  while (Clock::now() - window_start < 5s) {
    auto t0 = Clock::now();
    auto client = connect_once();
    ASSERT_TRUE(client.ok()) << client.error().message;
    auto rows = ps_blocks(*client);
    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    EXPECT_EQ(rows.size(), 2u);
    std::this_thread::sleep_for(100ms);
  }
  const auto window_end = Clock::now();
  const long long written = bytes_written(token) - written_before;
  const long rss_after = rss_kib(daemon);

  std::sort(latencies.begin(), latencies.end());
  const double p50 = latencies[latencies.size() / 2], worst = latencies.back();

  // Health checks inside the window: they kept running (how regularly is a figure).
  auto ms_of = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  };
  std::vector<long> in_window;
  for (long at : stamps(checks))
    if (at >= ms_of(window_start) && at <= ms_of(window_end)) in_window.push_back(at);
  long worst_gap = 0;
  for (std::size_t i = 1; i < in_window.size(); ++i)
    worst_gap = std::max(worst_gap, in_window[i] - in_window[i - 1]);
  EXPECT_GE(in_window.size(), 2u) << "health checks stopped during the flood";

  // The flood went on (a stuck follower must not slow the block) and the daemon's memory did
  // not grow with it.
  if (written_before >= 0 && written > 0) {
    EXPECT_GT(written, 0) << "the flood stalled: nothing written in 5 s";
  } else {
    ADD_FAILURE() << "could not read the flooding block's /proc/PID/io";
  }
  if (!kSanitized) {
    EXPECT_LT(rss_after - rss_before, 32 * 1024)
        << "daemon RSS grew from " << rss_before << " KiB to " << rss_after << " KiB";
  }
  std::printf(
      "[ figures  ] flood with 2 stuck followers, 5 s: %.0f MB/s through the daemon; "
      "ps p50 %.1f ms, worst %.1f ms (%zu calls); %zu health checks, worst gap %ld ms "
      "(interval %d ms); daemon RSS %ld -> %ld KiB\n",
      double(written) / 5e6, p50, worst, latencies.size(), in_window.size(), worst_gap,
      kHealthIntervalMs, rss_before, rss_after);

  ipc::Client client = connect();
  auto down = client.call("down", Json::object({{"stack", "flood"}}));
  ASSERT_TRUE(down.ok() && down->ok());
  ::close(raw);
  ::close(pipe_fds[0]);  // the CLI gets EPIPE and ends
  ::kill(cli, SIGTERM);
  ::waitpid(cli, nullptr, 0);
}

}  // namespace
}  // namespace stackie::fault
