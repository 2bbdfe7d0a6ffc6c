// An in-process measurement of a block's log hot path (issue 25), for a machine whose load makes
// bench/logs' wall clock noisy: the CPU time the daemon's thread spends per GiB of 100-byte
// lines fed as bench-spew writes them (65500-byte reads), into real rotating files, with no
// follower, with a follower whose events are encoded (and thrown away), and with a stuck one.
//
//   logs-microbench DIR [MIB] [ROUNDS] [READ_BYTES] [RING_BYTES] [FOLLOWERS]
//   (default 256 MiB, 5 rounds, reads of 65500 bytes, LogSettings' ring, followers
//   "none,encoding,stuck"; prints each round)
//
// Under `valgrind --tool=callgrind --toggle-collect='stackie::BlockLogs::feed*'`, with one
// kind of follower, it gives the instructions per line of the hot path whatever the machine's
// load (bench/RESULTS.md, "Logs, round four").
//
// Not a test: a tool run by hand; bench/RESULTS.md quotes it.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ipc/protocol.h"
#include "supervisor/block_logs.h"
#include "supervisor/daemon_handlers.h"

namespace {

using namespace stackie;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

// Encodes what the daemon's follower of `stackie logs -f` sends: one `text` event per read, each
// a message of its own (ipc::encode_event), as the daemon's session makes it.
struct EncodingSink : LogSink {
  size_t bytes = 0;
  std::string stamp = "2026-12-03T00:00:00.000Z";
  bool offer(const LogLine& line) override {
    bytes += ipc::encode_event(1, "line", [&](std::string& out) {
               write_log_line_event(out, "stack", "block", line, stamp);
             }).size();
    return true;
  }
  size_t offer_batch(const LogBatch& batch) override {
    bytes += ipc::encode_event(1, "text", [&](std::string& out) {
               write_log_text_event(out, "stack", "block", batch.stream, stamp, batch.lines);
             }).size();
    return 0;
  }
};

// As the daemon's follower of a client that stopped reading: it says so before each read.
struct StuckSink : LogSink {
  bool offer(const LogLine&) override { return false; }
  size_t offer_batch(const LogBatch& batch) override { return batch.lines.size(); }
  bool taking_lines() const override { return false; }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: logs-microbench DIR [MIB] [ROUNDS] [READ_BYTES] [RING_BYTES] [FOLLOWERS]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 256;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  std::string read;
  const size_t read_bytes = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 65500;
  LogSettings settings;
  if (argc > 5 && std::strtoul(argv[5], nullptr, 10) > 0)
    settings.ring_bytes = std::strtoul(argv[5], nullptr, 10);
  const std::string followers = "," + std::string(argc > 6 ? argv[6] : "none,encoding,stuck") + ",";
  while (read.size() + 100 <= read_bytes)
    read += std::string("bench-spew line ") + std::string(83, 'x') + "\n";
  const size_t reads = mib * 1024 * 1024 / read.size();
  const double gib = double(reads * read.size()) / (1024.0 * 1024 * 1024);
  for (int round = 0; round < rounds; ++round) {
    for (const char* follower : {"none", "encoding", "stuck"}) {
      if (followers.find("," + std::string(follower) + ",") == std::string::npos) continue;
      auto logs = BlockLogs::open("bench", dir + "/" + follower + std::to_string(round), settings);
      if (!logs.ok()) {
        std::fprintf(stderr, "%s\n", logs.error().message.c_str());
        return 1;
      }
      EncodingSink encoding;
      StuckSink stuck;
      if (std::string(follower) == "encoding") (*logs)->follow(&encoding);
      if (std::string(follower) == "stuck") (*logs)->follow(&stuck);
      double start = cpu_seconds();
      for (size_t i = 0; i < reads; ++i) (*logs)->feed(LogStream::out, read);
      double spent = cpu_seconds() - start;
      std::printf("round %d follower %-8s %.3f CPU s/GiB  %.0f ns/line  %.1f MB/s of CPU\n",
                  round + 1, follower, spent / gib,
                  spent * 1e9 / double(reads * (read.size() / 100)),
                  double(reads * read.size()) / spent / 1e6);
    }
  }
  return 0;
}
