// The HTTP API against the real stackied (config.toml's api_port), with curl and with raw
// hostile clients: the token, DNS rebinding (Host) and browsers (Origin) refused, oversized and
// slow requests cut off, SSE events received, and the daemon still serving afterwards.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "ipc/client.h"
#include "support/daemon_harness.h"

namespace stackie {
namespace {

using namespace std::chrono_literals;

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

struct Shell {
  int code = -1;
  std::string out;
};

Shell run(const std::string& command) {
  Shell result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, got);
  int status = ::pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class ApiTest : public fault::DaemonHarness {
 protected:
  void SetUp() override {
    DaemonHarness::SetUp();
    if (HasFatalFailure()) return;
    port_ = free_port();
    ::mkdir(home_.c_str(), 0700);
    std::ofstream(home_ + "/config.toml") << "api_port = " << port_ << "\n";
  }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string token() const {
    std::ifstream in(home_ + "/api.token");
    std::string line;
    std::getline(in, line);
    return line;
  }
  // curl -s, printing the body then the status code on the last line.
  Shell curl(const std::string& args) { return run("curl -s -m 20 -w '\\n%{http_code}' " + args); }
  static std::string status_of(const Shell& r) {
    auto nl = r.out.rfind('\n');
    return nl == std::string::npos ? r.out : r.out.substr(nl + 1);
  }
  std::string auth() const { return "-H 'Authorization: Bearer " + token() + "' "; }
  // A raw client: sends `bytes`, returns what came back before the daemon closed (or 20 s).
  std::string raw(const std::string& bytes, std::chrono::milliseconds pause_after = 0ms) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd);
      return "connect failed";
    }
    timeval timeout{20, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    size_t at = 0;
    while (at < bytes.size()) {
      ssize_t sent = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (sent <= 0) break;
      at += static_cast<size_t>(sent);
    }
    std::this_thread::sleep_for(pause_after);
    std::string out;
    char buffer[4096];
    ssize_t got;
    while ((got = ::recv(fd, buffer, sizeof buffer, 0)) > 0) out.append(buffer, got);
    ::close(fd);
    return out;
  }
  void bring_up() {
    start_daemon();
    auto reply = up("web", "web:\n  blocks:\n    api:\n      path: .\n      command: [" + helper_ +
                               ", print, hello, wait]\n");
    ASSERT_TRUE(reply.ok() && reply->ok())
        << (reply.ok() ? reply->error().message : reply.error().message);
  }
  int port_ = 0;
};

TEST_F(ApiTest, TokenHostOriginAndTheEndpointsWithCurl) {
  bring_up();
  struct stat st {};
  ASSERT_EQ(::stat((home_ + "/api.token").c_str(), &st), 0) << "made on first use";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(token().size(), 64u);

  Shell health = curl(base() + "/api/system/health");
  EXPECT_EQ(status_of(health), "200") << health.out;
  EXPECT_NE(health.out.find("\"status\":\"ok\""), std::string::npos);

  EXPECT_EQ(status_of(curl(base() + "/api/blocks")), "401") << "no token";
  EXPECT_EQ(status_of(curl("-H 'Authorization: Bearer " + std::string(64, '0') + "' " + base() +
                           "/api/blocks")),
            "401")
      << "wrong token";
  // DNS rebinding: a page at evil.example resolved to 127.0.0.1 sends its own Host.
  EXPECT_EQ(status_of(curl(auth() + "-H 'Host: evil.example:" + std::to_string(port_) + "' " +
                           base() + "/api/blocks")),
            "421");
  EXPECT_EQ(status_of(curl("-H 'Host: evil.example' " + base() + "/api/system/health")), "421");
  EXPECT_EQ(status_of(curl(auth() + "-H 'Origin: http://127.0.0.1:" + std::to_string(port_) + "' " +
                           base() + "/api/blocks")),
            "403")
      << "a browser's request";
  EXPECT_EQ(status_of(curl(auth() + "-H 'Host: localhost:" + std::to_string(port_) + "' " + base() +
                           "/api/blocks")),
            "200");

  // The same document as the IPC's ps.
  Shell blocks = curl(auth() + base() + "/api/blocks");
  ASSERT_EQ(status_of(blocks), "200") << blocks.out;
  auto parsed = parse_json(blocks.out.substr(0, blocks.out.rfind('\n')));
  ASSERT_TRUE(parsed.ok()) << blocks.out;
  EXPECT_EQ((*parsed)["v"].int_or(0), 1);
  ASSERT_EQ((*parsed)["blocks"].size(), 1u);
  EXPECT_EQ((*parsed)["blocks"][0]["name"].string_or(""), "api");
  EXPECT_EQ((*parsed)["blocks"][0]["state"].string_or(""), "running");

  Shell stacks = curl(auth() + base() + "/api/stacks");
  EXPECT_NE(stacks.out.find("\"name\":\"web\""), std::string::npos) << stacks.out;
  Shell inspect = curl(auth() + base() + "/api/blocks/web%2Fapi");
  EXPECT_EQ(status_of(inspect), "200") << inspect.out;
  EXPECT_NE(inspect.out.find("\"last_exit\""), std::string::npos);
  EXPECT_EQ(status_of(curl(auth() + base() + "/api/blocks/nope")), "404");
  Shell logs = curl(auth() + "'" + base() + "/api/blocks/api/logs?tail=5'");
  EXPECT_NE(logs.out.find("\"lines\":[{"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("\"text\":\"hello\""), std::string::npos) << logs.out;
  EXPECT_EQ(status_of(curl(auth() + "'" + base() + "/api/blocks/api/logs?tail=x'")), "400");
  Shell stats = curl(auth() + "'" + base() + "/api/stats?interval_ms=200'");
  EXPECT_NE(stats.out.find("\"cpu_percent\""), std::string::npos) << stats.out;

  // SSE: curl -N follows the events while the block is restarted through the API.
  std::string sse_file = dir_ + "/sse.txt";
  std::string follow = "curl -s -N -m 8 " + auth() + "'" + base() +
                       "/api/events?follow=1&block=api' > " + sse_file + " 2>&1 &";
  ASSERT_EQ(std::system(follow.c_str()), 0);
  std::this_thread::sleep_for(500ms);
  Shell restart = curl("-X POST " + auth() + "'" + base() + "/api/blocks/api/restart?wait=1'");
  EXPECT_EQ(status_of(restart), "200") << restart.out;
  EXPECT_NE(restart.out.find("\"state\":\"running\""), std::string::npos) << restart.out;
  EXPECT_EQ(status_of(curl(auth() + base() + "/api/blocks/api/restart")), "405") << "GET";
  bool got = wait_for(
      [&] {
        std::ifstream in(sse_file);
        std::stringstream text;
        text << in.rdbuf();
        return text.str().find("event: event\ndata: {") != std::string::npos &&
               text.str().find("\"action\":\"start\"") != std::string::npos;
      },
      10s);
  EXPECT_TRUE(got) << "the SSE stream gave the restart's events";
  std::ifstream in(sse_file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"action\":\"die\""), std::string::npos) << text.str();

  // kill goes to the restart policy (on-failure restarts a block killed by a signal).
  Shell kill = curl("-X POST " + auth() + "'" + base() + "/api/blocks/api/kill?signal=KILL'");
  EXPECT_EQ(status_of(kill), "200") << kill.out;
  Shell bad_signal = curl("-X POST " + auth() + "'" + base() + "/api/blocks/api/kill?signal=NOPE'");
  EXPECT_EQ(status_of(bad_signal), "400") << bad_signal.out;
}

// POST .../exec: the daemon runs the command in the block (IPC exec.run) and answers its exit
// and output, each stream cut at 64 KiB; the block's bytes come back inside JSON strings.
TEST_F(ApiTest, ExecRunsACommandInTheBlockAndCapturesItsOutput) {
  bring_up();
  auto exec = [&](const std::string& body) {
    std::ofstream(dir_ + "/body.json") << body;
    return curl("-X POST -H 'Content-Type: application/json' --data-binary @" + dir_ +
                "/body.json " + auth() + base() + "/api/blocks/api/exec");
  };
  auto json_of = [](const Shell& r) {
    auto parsed = parse_json(r.out.substr(0, r.out.rfind('\n')));
    return parsed.ok() ? *parsed : Json();
  };
  Shell ran = exec(R"({"argv":["sh","-c","echo out; echo err >&2; exit 3"]})");
  ASSERT_EQ(status_of(ran), "200") << ran.out;
  Json result = json_of(ran);
  EXPECT_EQ(result["exit_code"].int_or(-1), 3) << ran.out;
  EXPECT_EQ(result["stdout"]["text"].string_or(""), "out\n");
  EXPECT_EQ(result["stderr"]["text"].string_or(""), "err\n");
  EXPECT_FALSE(result["timed_out"].bool_or(true));

  Shell big = exec(R"({"argv":["sh","-c","head -c 100000 /dev/zero | tr '\\0' x"]})");
  Json cut = json_of(big);
  EXPECT_TRUE(cut["stdout"]["truncated"].bool_or(false)) << big.out.substr(0, 200);
  EXPECT_EQ(cut["stdout"]["bytes"].int_or(0), 100000);
  EXPECT_EQ(cut["stdout"]["text"].string_or("").size(), 65536u);

  // What the block prints is data: broken UTF-8 and a fake JSON document stay one string.
  Shell hostile = exec(R"({"argv":["sh","-c","printf 'a\\377b\\n{\"exit_code\":0}'"]})");
  Json quoted = json_of(hostile);
  EXPECT_EQ(quoted["exit_code"].int_or(-1), 0) << hostile.out;
  EXPECT_NE(quoted["stdout"]["text"].string_or("").find("{\"exit_code\":0}"), std::string::npos)
      << hostile.out;

  Shell slow = exec(R"({"argv":["sleep","30"],"timeout_s":1})");
  Json killed = json_of(slow);
  EXPECT_TRUE(killed["timed_out"].bool_or(false)) << slow.out;
  // The sandbox's launcher reports its command's death by SIGTERM as 128+15 (stackie-lockbox(1)).
  EXPECT_TRUE(killed["exit_code"].int_or(0) == 128 + SIGTERM ||
              killed["signal"].int_or(0) == SIGTERM)
      << slow.out;

  EXPECT_EQ(status_of(exec("not json")), "400");
  EXPECT_EQ(status_of(exec(R"({"timeout_s":5})")), "400") << "no argv";
  EXPECT_EQ(status_of(exec(R"({"argv":[]})")), "400");
  EXPECT_EQ(status_of(exec(R"({"argv":["true"],"timeout_s":301})")), "400");
  EXPECT_EQ(status_of(curl(auth() + base() + "/api/blocks/api/exec")), "405") << "GET";
  std::ofstream(dir_ + "/body.json") << R"({"argv":["true"]})";
  EXPECT_EQ(status_of(curl("-X POST --data-binary @" + dir_ + "/body.json " + auth() + base() +
                           "/api/blocks/nope/exec")),
            "404");
  EXPECT_EQ(status_of(curl("-X POST --data-binary @" + dir_ + "/body.json " + base() +
                           "/api/blocks/api/exec")),
            "401")
      << "exec needs the token like everything else";
}

TEST_F(ApiTest, HostileClientsAreCutOffAndTheDaemonGoesOn) {
  bring_up();
  std::string host = "Host: 127.0.0.1:" + std::to_string(port_) + "\r\n";
  // Headers past 16 KiB.
  std::string huge = "GET /api/system/health HTTP/1.1\r\n" + host +
                     "X-Pad: " + std::string(64 * 1024, 'a') + "\r\n\r\n";
  EXPECT_NE(raw(huge).find("HTTP/1.1 431"), std::string::npos);
  // A body past 1 MiB announced, and one sent without a length.
  std::string big_body = "POST /api/blocks HTTP/1.1\r\n" + host +
                         "Content-Length: 5000000\r\n\r\n" + std::string(1000, 'x');
  EXPECT_NE(raw(big_body).find("HTTP/1.1 413"), std::string::npos);
  std::string chunked = "POST /api/blocks HTTP/1.1\r\n" + host +
                        "Transfer-Encoding: chunked\r\n\r\n200000\r\n" +
                        std::string(0x200000, 'y') + "\r\n0\r\n\r\n";
  EXPECT_NE(raw(chunked).find("HTTP/1.1 413"), std::string::npos);
  // Garbage.
  EXPECT_NE(raw("\x16\x03\x01 not http at all\r\n\r\n").find("HTTP/1.1 400"), std::string::npos);
  // A slow client: half a request, then nothing; the daemon answers 408 and closes.
  auto before = fault::Clock::now();
  std::string slow = raw("GET /api/system/health HTTP/1.1\r\n");
  EXPECT_NE(slow.find("HTTP/1.1 408"), std::string::npos) << slow;
  EXPECT_GE(fault::Clock::now() - before, 5s) << "not cut before its time";
  // Many connections that send nothing, and a hundred that vanish mid-request.
  std::vector<int> idle;
  for (int i = 0; i < 80; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
      idle.push_back(fd);
    else
      ::close(fd);
  }
  for (int i = 0; i < 100; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
      (void)::send(fd, "GET /api/events?follow=1 HT", 27, MSG_NOSIGNAL);
    ::close(fd);
  }
  for (int fd : idle) ::close(fd);
  // Still serving, both its API and its socket.
  bool answering =
      wait_for([&] { return status_of(curl(base() + "/api/system/health")) == "200"; }, 15s);
  EXPECT_TRUE(answering);
  ipc::Client client = connect();
  EXPECT_EQ(ps_blocks(client).size(), 1u);
}

TEST_F(ApiTest, ATokenFileOthersCanReadStopsTheDaemonFromServingIt) {
  ::mkdir(home_.c_str(), 0700);
  std::ofstream(home_ + "/api.token") << std::string(64, 'a') << "\n";
  ::chmod((home_ + "/api.token").c_str(), 0644);
  pid_t daemon = start_daemon();
  EXPECT_EQ(wait_exit(daemon, 10s), 1) << "refuses to start with a readable token";
  std::ifstream log(dir_ + "/daemon.log");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("chmod 600"), std::string::npos) << text.str();
}

}  // namespace
}  // namespace stackie
