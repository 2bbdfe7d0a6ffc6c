// The daemon's IPC methods (docs/ipc.md): each request is decoded here, handed to the Daemon /
// Supervisor, and answered once. This is an edge: errors become error replies, never prints.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/uv_handle.h"
#include "ipc/server.h"
#include "supervisor/daemon_core.h"

namespace stackie {

// The `line` event of `logs` for one log line (docs/ipc.md): {stack, block, stream, ts, text}.
// Any bytes of the line make valid JSON that every reader accepts (NUL and bytes that are not
// UTF-8 become U+FFFD); tests/fuzz/logwire_fuzz.cc holds it to that.
Json log_line_event(const std::string& stack, const std::string& block, const LogLine& line,
                    const std::string& timestamp);
// Appends to_json(log_line_event(...)) without building the Json: the follower's hot path.
void write_log_line_event(std::string& out, const std::string& stack, const std::string& block,
                          const LogLine& line, const std::string& timestamp);

// The `lines` event of `logs` (docs/ipc.md), sent to a follower that asked for batches
// ("batch": true): the lines of one read from one block's stream, which share the stream and
// the time: {stack, block, stream, ts, lines: [{level, text}...]}. One event per read instead
// of one per line (issue 25).
Json log_lines_event(const std::string& stack, const std::string& block, LogStream stream,
                     const std::string& timestamp, std::span<const LogBatchLine> lines);
// Appends to_json(log_lines_event(...)) without building the Json.
void write_log_lines_event(std::string& out, const std::string& stack, const std::string& block,
                           LogStream stream, const std::string& timestamp,
                           std::span<const LogBatchLine> lines);

// The `text` event of `logs` (docs/ipc.md), sent to a follower that asked for
// "batch": "text": the lines of one read as one string, {stack, block, stream, ts, levels,
// text}, where `text` is each line followed by "\n" and `levels` has one letter per line
// (base/log_level.h letter_of). A client decodes one string instead of an object per line, and
// prints it as it came when it adds nothing to a line: `logs -f` under a flood cost as much CPU as
// the daemon, taken from the block on a small machine (issue 25).
Json log_text_event(const std::string& stack, const std::string& block, LogStream stream,
                    const std::string& timestamp, std::span<const LogBatchLine> lines);
// Appends to_json(log_text_event(...)) without building the Json.
void write_log_text_event(std::string& out, const std::string& stack, const std::string& block,
                          LogStream stream, const std::string& timestamp,
                          std::span<const LogBatchLine> lines);

// The IPC error code of an Error from the supervisor (ENOENT: not_found, EBUSY: busy, ...).
std::string_view code_for(const Error& error);

class DaemonHandlers final : public ipc::Handler {
 public:
  // `lockbox`: the launcher path reported by `exec` (empty when none was found).
  DaemonHandlers(Daemon& daemon, std::string lockbox, uint64_t started_ms);
  ~DaemonHandlers() override;

  void on_request(ipc::Session session, const ipc::Request& request) override;
  void on_close(const ipc::Session& session) override;

  // Followers still attached (tests).
  size_t follower_count() const { return followers_.size(); }
  size_t event_follower_count() const { return event_followers_.size(); }

 private:
  struct Follower;
  void up(ipc::Session session, const Json& params);
  void down(ipc::Session session, const Json& params);
  void signal(ipc::Session session, const Json& params);
  void ps(ipc::Session session, const Json& params);
  void status(ipc::Session session, const Json& params);
  void logs(ipc::Session session, const Json& params);
  void exec(ipc::Session session, const Json& params);
  void exec_run(ipc::Session session, const Json& params);  // daemon_exec_run.cc
  void block_action(ipc::Session session, const Json& params, const std::string& action);
  void kill(ipc::Session session, const Json& params);
  void events(ipc::Session session, const Json& params);
  void stats(ipc::Session session, const Json& params);
  struct StatsWatch;
  void stats_tick(StatsWatch& watch);
  void daemon_status(ipc::Session session);
  void drop_followers_of(const std::string& stack);
  std::optional<Json> log_files_event(const std::string& stack, const std::string& block);

  // Which stack/block a request means (docs/ipc.md: `stack` may be omitted).
  struct Target {
    std::string stack;
    std::string block;
  };
  Result<std::string> resolve_stack(const Json& params) const;
  Result<Target> resolve_block(const Json& params) const;
  std::string stack_of_file(const std::string& file) const;
  // The one place a block's name becomes a Target: "STACK/BLOCK", or BLOCK in `stack` when it
  // is given, or BLOCK in the only stack that has one by that name.
  Result<Target> resolve_block_name(std::string block, std::string stack) const;

  Daemon& daemon_;
  std::string lockbox_;
  uint64_t started_ms_;
  std::map<uint64_t, std::vector<std::unique_ptr<Follower>>> followers_;  // by session serial
  std::map<uint64_t, uint64_t> event_followers_;  // session serial -> bus subscription
  // `stats` requests in progress (their timer is the only sampling there is), by serial.
  std::map<uint64_t, std::unique_ptr<StatsWatch>> stats_watches_;
  // `exec.run` commands not yet answered; shared with their callbacks, which may outlive this
  // object when the daemon stops while one runs.
  std::shared_ptr<size_t> exec_runs_ = std::make_shared<size_t>(0);
};

}  // namespace stackie
