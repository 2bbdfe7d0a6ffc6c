#include "supervisor/daemon_handlers.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>

#include "base/directories.h"
#include "base/fs_path.h"
#include "base/log_level.h"
#include "base/version.h"
#ifndef _WIN32
#include "base/posix_io.h"
#include "base/safe_open.h"
#endif
#include "stack/shared_mode.h"
#include "supervisor/block_stats.h"
#include "supervisor/block_target.h"
#include "supervisor/event_bus.h"
#include "supervisor/exit_description.h"

namespace stackie {

using ipc::Session;
namespace errc = ipc::errc;

std::string_view code_for(const Error& error) {
  if (error.code == UV_ENOENT) return errc::kNotFound;
  if (error.code == UV_EBUSY) return errc::kBusy;
  if (error.code == UV_ECANCELED) return errc::kShuttingDown;
  if (error.code == UV_EINVAL) return errc::kInvalidParams;
  return errc::kFailed;
}

namespace {

uint64_t wall_ms() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

std::string_view health_of(BlockState state, bool has_health_check) {
  if (!has_health_check) return "none";
  switch (state) {
    case BlockState::running: return "healthy";
    case BlockState::starting: return "starting";
    default: return "unhealthy";
  }
}

Json ps_row(const BlockStatus& row) {
  Json ports = Json::array();
  for (const auto& port : row.serves) {
    int host = port.host_port != 0 ? port.host_port : port.port;
    Json entry = Json::object({{"name", port.name},
                               {"type", port.type},
                               {"host", "127.0.0.1:" + std::to_string(host)},
                               {"sandbox", port.port}});
    // A port moved off the one the stack asked for: which, and why.
    for (const auto& moved : row.moved_ports)
      if (moved.port == port.name && moved.host == host) {
        entry.set("wanted", moved.wanted);
        entry.set("note", moved.note);
      }
    ports.push_back(std::move(entry));
  }
  bool alive = row.pid > 0 && has_process(row.state);
  Json used_by = Json::array();
  for (const auto& stack : row.used_by) used_by.push_back(stack);
  return Json::object({
      {"stack", row.stack},
      {"name", row.block},
      {"sandbox_id", row.sandbox_id},
      {"state", std::string(to_string(row.state))},
      {"health", std::string(health_of(row.state, row.has_health_check))},
      {"pid", alive ? Json(row.pid) : Json()},
      {"uptime_s", alive ? Json(static_cast<int64_t>(row.uptime_ms / 1000)) : Json()},
      {"restarts", row.restarts},
      {"ports", ports},
      {"sandbox", std::string(to_string(row.sandbox))},
      {"network", row.network},
      {"message", row.reason},
      // A shared instance (stack "@shared"): the stacks that use it; [] for a stack's own.
      {"used_by", used_by},
  });
}

// `status`'s "limits": what the block may use (its policy's limits, also in "policy"), how
// that is enforced, and what it uses now when its cgroup can tell.
Json limits_json(const BlockStatus& row, const StackRunner& stack) {
  Json out = Json::object({{"enforcement", row.limits_enforcement}});
  for (const auto& block : stack.spec().blocks) {
    if (block.name != row.block) continue;
    const ResourceLimits& limits = block.policy.limits;
    out.set("memory", static_cast<int64_t>(limits.memory_bytes));
    out.set("pids", limits.pids);
    out.set("cpu_millis", limits.cpu_millis);
    out.set("shm", static_cast<int64_t>(limits.shm_bytes));
  }
  if (row.usage) {
    out.set("usage",
            Json::object({{"memory", static_cast<int64_t>(row.usage->memory_bytes)},
                          {"memory_peak", static_cast<int64_t>(row.usage->memory_peak_bytes)},
                          {"pids", row.usage->pids},
                          {"cpu_usec", static_cast<int64_t>(row.usage->cpu_usec)},
                          {"oom_kills", static_cast<int64_t>(row.usage->oom_kills)},
                          {"pids_refused", static_cast<int64_t>(row.usage->pids_refused)}}));
  } else {
    out.set("usage", Json());
  }
  return out;
}

// The policy as `status` shows it: secret values masked wherever they appear, as `stackie
// validate` does (a status is printed on screens and pasted into bug reports).
SandboxPolicy masked_policy(const ResolvedBlock& block) {
  SandboxPolicy policy = block.policy;
  for (auto& [name, value] : policy.environment)
    for (const auto& secret : block.secret_values) {
      if (secret.empty()) continue;
      for (size_t at = 0; (at = value.find(secret, at)) != std::string::npos; at += 8)
        value.replace(at, secret.size(), "********");
    }
  return policy;
}

}  // namespace

Json log_line_event(const std::string& stack, const std::string& block, const LogLine& line,
                    const std::string& timestamp) {
  return Json::object(
      {{"stack", stack},
       {"block", block},
       {"stream", std::string(to_string(line.stream))},
       {"ts", timestamp},
       {"level",
        line.level == LogLevel::unknown ? Json() : Json(std::string(to_string(line.level)))},
       {"text", line.text}});
}

void write_log_line_event(std::string& out, const std::string& stack, const std::string& block,
                          const LogLine& line, const std::string& timestamp) {
  out += "{\"stack\":";
  append_json_string(out, stack);
  out += ",\"block\":";
  append_json_string(out, block);
  out += ",\"stream\":";
  append_json_string(out, to_string(line.stream));
  out += ",\"ts\":";
  append_json_string(out, timestamp);
  out += ",\"level\":";
  if (line.level == LogLevel::unknown)
    out += "null";
  else
    append_json_string(out, to_string(line.level));
  out += ",\"text\":";
  append_json_string(out, line.text);
  out += '}';
}

namespace {

Json level_json(LogLevel level) {
  return level == LogLevel::unknown ? Json() : Json(std::string(to_string(level)));
}

void write_level(std::string& out, LogLevel level) {
  if (level == LogLevel::unknown)
    out += "null";
  else
    append_json_string(out, to_string(level));
}

}  // namespace

namespace {

void write_event_head(std::string& out, const std::string& stack, const std::string& block,
                      LogStream stream, const std::string& timestamp) {
  out += "{\"stack\":";
  append_json_string(out, stack);
  out += ",\"block\":";
  append_json_string(out, block);
  out += ",\"stream\":";
  append_json_string(out, to_string(stream));
  out += ",\"ts\":";
  append_json_string(out, timestamp);
}

}  // namespace

Json log_lines_event(const std::string& stack, const std::string& block, LogStream stream,
                     const std::string& timestamp, std::span<const LogBatchLine> lines) {
  Json list = Json::array();
  for (const auto& line : lines)
    list.push_back(
        Json::object({{"level", level_json(line.level)}, {"text", std::string(line.text)}}));
  return Json::object({{"stack", stack},
                       {"block", block},
                       {"stream", std::string(to_string(stream))},
                       {"ts", timestamp},
                       {"lines", std::move(list)}});
}

namespace {

// The room an event of `lines` takes with `per_line` bytes around each text, reserved before it
// is written: grown by appends, a 256 KiB event was copied into ever larger buffers, a quarter
// of the daemon's CPU with one `logs -f` (perf, bench/logs). Texts that need escapes grow it
// once.
void reserve_for_lines(std::string& out, std::span<const LogBatchLine> lines, size_t per_line) {
  constexpr size_t kHead = 256;  // the event's header and its fields before the lines
  size_t bytes = out.size() + kHead;
  for (const auto& line : lines) bytes += line.text.size() + per_line;
  out.reserve(bytes);
}

}  // namespace

void write_log_lines_event(std::string& out, const std::string& stack, const std::string& block,
                           LogStream stream, const std::string& timestamp,
                           std::span<const LogBatchLine> lines) {
  reserve_for_lines(out, lines, std::string_view(",{\"level\":\"debug\",\"text\":\"\"}").size());
  write_event_head(out, stack, block, stream, timestamp);
  out += ",\"lines\":[";
  // What comes before each line's text, by level, written once: a line is then its text and two
  // appends (issue 25: the level's string, the keys and the quotes were most of a line's).
  static const std::array<std::string, 6> kBeforeText = [] {
    std::array<std::string, 6> before;
    for (size_t level = 0; level < before.size(); ++level) {
      before[level] = ",{\"level\":";
      write_level(before[level], static_cast<LogLevel>(level));
      before[level] += ",\"text\":\"";
    }
    return before;
  }();
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view before = kBeforeText[static_cast<size_t>(lines[i].level)];
    out += i == 0 ? before.substr(1) : before;
    append_json_string_contents(out, lines[i].text);
    out += "\"}";
  }
  out += "]}";
}

Json log_text_event(const std::string& stack, const std::string& block, LogStream stream,
                    const std::string& timestamp, std::span<const LogBatchLine> lines) {
  std::string levels, text;
  for (const auto& line : lines) {
    levels += letter_of(line.level);
    text.append(line.text);
    text += '\n';
  }
  return Json::object({{"stack", stack},
                       {"block", block},
                       {"stream", std::string(to_string(stream))},
                       {"ts", timestamp},
                       {"levels", std::move(levels)},
                       {"text", std::move(text)}});
}

void write_log_text_event(std::string& out, const std::string& stack, const std::string& block,
                          LogStream stream, const std::string& timestamp,
                          std::span<const LogBatchLine> lines) {
  reserve_for_lines(out, lines, 3);  // its level's letter and "\n"
  write_event_head(out, stack, block, stream, timestamp);
  out += ",\"levels\":\"";
  for (const auto& line : lines) out += letter_of(line.level);
  out += "\",\"text\":\"";
  for (const auto& line : lines) {
    append_json_string_contents(out, line.text);
    out += "\\n";
  }
  out += "\"}";
}

namespace {

// `"blocks"`, `"profiles"`, `"names"`: an array of strings (absent = none).
Result<std::vector<std::string>> names_param(const Json& value, std::string_view key) {
  std::vector<std::string> out;
  if (value.is_null()) return out;
  if (!value.is_array()) return Error{UV_EINVAL, std::string(key) + " must be an array of strings"};
  for (const auto& item : value.as_array()) {
    if (!item.is_string() || item.as_string().empty())
      return Error{UV_EINVAL, std::string(key) + " must be an array of names"};
    out.push_back(item.as_string());
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> env_param(const Json& env) {
  std::vector<std::pair<std::string, std::string>> out;
  if (env.is_null()) return out;
  if (!env.is_object()) return Error{UV_EINVAL, "env must be an object of strings"};
  for (const auto& [key, value] : env.as_object()) {
    if (!value.is_string()) return Error{UV_EINVAL, "env." + key + " must be a string"};
    out.emplace_back(key, value.as_string());
  }
  return out;
}

// Which lines a `logs` request asked for: its streams (`streams`: "stdout", "stderr"; none =
// all; the daemon's own notes go with stderr, as they do in the files, stderr.log) and, with
// `level`, only lines that announce at least that severity (base/log_level.h).
struct LineFilter {
  bool out = true, err = true;
  std::optional<LogLevel> min_level;
  bool wants_stream(LogStream stream) const { return stream == LogStream::out ? out : err; }
  bool wants_level(LogLevel level) const {
    return !min_level || (level != LogLevel::unknown && level >= *min_level);
  }
  bool wants(const LogLine& line) const {
    return wants_stream(line.stream) && wants_level(line.level);
  }
};

Result<LineFilter> line_filter(const Json& streams, const Json& level) {
  LineFilter filter;
  if (!level.is_null()) {
    filter.min_level = level.is_string() ? parse_log_level(level.as_string()) : std::nullopt;
    if (!filter.min_level)
      return Error{UV_EINVAL, "\"level\" is one of debug, info, warn, error, fatal"};
  }
  if (streams.is_null()) return filter;
  if (!streams.is_array()) return Error{UV_EINVAL, "\"streams\" must be an array"};
  if (streams.size() == 0) return filter;
  filter.out = filter.err = false;
  for (const auto& s : streams.as_array()) {
    std::string name = s.string_or("");
    if (name == "stdout")
      filter.out = true;
    else if (name == "stderr")
      filter.err = true;
    else
      return Error{UV_EINVAL, "\"streams\" holds \"stdout\" or \"stderr\", not \"" + name + "\""};
  }
  return filter;
}

}  // namespace

// One `logs -f` subscription of one block. offer() never blocks: a full client queue makes the
// server skip the event (and BlockLogs count it for the marker line).
struct DaemonHandlers::Follower final : LogSink {
  Session session;
  std::string stack;
  std::string block;
  LineFilter filter;
  uint64_t id = 0;
  TimestampText stamps;
  // What the client takes for the lines of a read: a `line` event each, one `lines` event
  // ("batch": true) or one `text` event ("batch": "text"), or nothing ("files": true: it reads
  // the block's log files itself, and this follower only ends its call with the stack).
  enum class Batch { none, lines, text, files } batch = Batch::none;
  Batch asked = Batch::none;         // with files: what it takes if they fail (below)
  std::vector<LogBatchLine> wanted;  // reused: the lines of a batch that pass the filter
  bool offer(const LogLine& line) override {
    if (batch == Batch::files || !filter.wants(line)) return true;  // nothing to send or skip
    const std::string& timestamp = stamps.of(line.time_ms);
    return session.event_lazily(
               "line", [&] { return log_line_event(stack, block, line, timestamp); },
               [&](std::string& out) {
                 write_log_line_event(out, stack, block, line, timestamp);
               }) == ipc::EventOutcome::sent;
  }
  // All of the batch in one `lines` event, or none of it.
  size_t offer_batch(const LogBatch& lines) override {
    if (batch == Batch::files) return 0;
    if (batch == Batch::none) return LogSink::offer_batch(lines);
    if (!filter.wants_stream(lines.stream)) return 0;
    wanted.clear();
    for (const auto& line : lines.lines)
      if (filter.wants_level(line.level)) wanted.push_back(line);
    if (wanted.empty()) return 0;
    const std::string& timestamp = stamps.of(lines.time_ms);
    auto outcome =
        batch == Batch::text
            ? session.event_lazily(
                  "text",
                  [&] { return log_text_event(stack, block, lines.stream, timestamp, wanted); },
                  [&](std::string& out) {
                    write_log_text_event(out, stack, block, lines.stream, timestamp, wanted);
                  })
            : session.event_lazily(
                  "lines",
                  [&] { return log_lines_event(stack, block, lines.stream, timestamp, wanted); },
                  [&](std::string& out) {
                    write_log_lines_event(out, stack, block, lines.stream, timestamp, wanted);
                  });
    return outcome == ipc::EventOutcome::sent ? 0 : wanted.size();
  }
  // A client that does not keep up: its events would be skipped, so BlockLogs does not gather
  // lines for it (issue 25: a stuck `logs -f` must cost the block nothing per line).
  bool taking_lines() const override { return batch != Batch::files && session.takes_events(); }
  // The files this client reads were not written: it is told, and sent the lines from here on
  // (the note saying why comes next, as a `line`), as a follower that never asked for files.
  void files_failed(const std::string& error) override {
    if (batch != Batch::files) return;
    batch = asked;
    session.event("files_failed",
                  Json::object({{"stack", stack}, {"block", block}, {"error", error}}));
  }
  // What offer_batch() would have wanted and had skipped, counted from the read's levels: as
  // many lines, and the events they would have been (one `lines` event, or one per line).
  size_t missed(LogStream stream, const LevelCounts& per_level) override {
    if (batch == Batch::files || !filter.wants_stream(stream)) return 0;
    uint64_t wanted_lines = 0;
    for (size_t level = 0; level < per_level.size(); ++level)
      if (filter.wants_level(static_cast<LogLevel>(level))) wanted_lines += per_level[level];
    if (wanted_lines > 0) session.skip_events(batch != Batch::none ? 1 : wanted_lines);
    return static_cast<size_t>(wanted_lines);
  }
};

DaemonHandlers::DaemonHandlers(Daemon& daemon, std::string lockbox, uint64_t started_ms)
    : daemon_(daemon), lockbox_(std::move(lockbox)), started_ms_(started_ms) {}

DaemonHandlers::~DaemonHandlers() {
  for (auto& [serial, list] : followers_)
    for (auto& f : list) daemon_.supervisor().unfollow(f->stack, f->block, f->id);
  for (auto& [serial, subscription] : event_followers_)
    daemon_.supervisor().events().unsubscribe(subscription);
}

void DaemonHandlers::on_close(const Session& session) {
  stats_watches_.erase(session.serial());
  if (auto follower = event_followers_.find(session.serial()); follower != event_followers_.end()) {
    daemon_.supervisor().events().unsubscribe(follower->second);
    event_followers_.erase(follower);
  }
  auto it = followers_.find(session.serial());
  if (it == followers_.end()) return;
  for (auto& f : it->second) daemon_.supervisor().unfollow(f->stack, f->block, f->id);
  followers_.erase(it);
}

// The stack went down: its followers are gone with its BlockLogs. A `logs -f` that followed
// only blocks of that stack ends; one that follows other stacks too goes on with those.
void DaemonHandlers::drop_followers_of(const std::string& stack) {
  for (auto it = followers_.begin(); it != followers_.end();) {
    auto& list = it->second;
    if (list.empty()) {
      ++it;
      continue;
    }
    Session session = list.front()->session;
    std::erase_if(list, [&](const auto& f) { return f->stack == stack; });
    if (!list.empty()) {
      ++it;
      continue;
    }
    it = followers_.erase(it);
    session.reply(Json::object());
  }
}

void DaemonHandlers::on_request(Session session, const ipc::Request& request) {
  const std::string& m = request.method;
  const Json& params = request.params;
  if (daemon_.stopping() && m != "daemon.status" && m != "ps" && m != "status" && m != "logs" &&
      m != "events" && m != "stats") {
    session.fail(errc::kShuttingDown, "the daemon is stopping");
    return;
  }
  if (m == "up") return up(session, params);
  if (m == "down") return down(session, params);
  if (m == "ps") return ps(session, params);
  if (m == "status") return status(session, params);
  if (m == "logs") return logs(session, params);
  if (m == "exec") return exec(session, params);
  if (m == "exec.run") return exec_run(session, params);
  if (m == "restart" || m == "stop" || m == "start") return block_action(session, params, m);
  if (m == "kill") return kill(session, params);
  if (m == "events") return events(session, params);
  if (m == "stats") return stats(session, params);
  if (m == "signal") return signal(session, params);
  if (m == "daemon.status") return daemon_status(session);
  if (m == "daemon.stop") {
    session.reply(Json::object());
    daemon_.stop();
    return;
  }
  session.fail(errc::kUnknownMethod, "unknown method " + m);
}

Result<std::string> DaemonHandlers::resolve_stack(const Json& params) const {
  std::string stack = params["stack"].string_or("");
  if (!stack.empty()) {
    if (!daemon_.supervisor().has_stack(stack))
      return Error{UV_ENOENT, "stack " + stack + " is not up"};
    return stack;
  }
  auto stacks = daemon_.supervisor().stacks();
  // The shared instances are no one's stack: "the only stack up" is the only user's one.
  if (stacks.size() > 1) std::erase(stacks, std::string(kSharedStack));
  if (stacks.size() == 1) return stacks[0];
  if (stacks.empty()) return Error{UV_ENOENT, "no stack is up"};
  std::string names;
  for (const auto& name : stacks) names += (names.empty() ? "" : ", ") + name;
  return Error{UV_EINVAL, "several stacks are up (" + names +
                              "): name one (-p STACK, or STACK/BLOCK for a block)"};
}

Result<DaemonHandlers::Target> DaemonHandlers::resolve_block(const Json& params) const {
  std::string block = params["block"].string_or("");
  if (block.empty()) return Error{UV_EINVAL, "\"block\" is required"};
  return resolve_block_name(std::move(block), params["stack"].string_or(""));
}

// BLOCK, STACK/BLOCK or a sandbox id, through the one resolver (supervisor/block_target.h).
Result<DaemonHandlers::Target> DaemonHandlers::resolve_block_name(std::string block,
                                                                  std::string stack) const {
  STACKIE_TRY_ASSIGN(target, resolve_block_target(daemon_.supervisor(), stack, block));
  return Target{target.stack, target.block};
}

void DaemonHandlers::up(Session session, const Json& params) {
  UpRequest request;
  request.file = params["file"].string_or("");
  request.cwd = params["cwd"].string_or("");
  auto env = env_param(params["env"]);
  if (!env.ok()) return session.fail(errc::kInvalidParams, env.error().message);
  request.env = std::move(env).value();
  request.ephemeral = params["ephemeral"].bool_or(false);
  request.no_sandbox = params["no_sandbox"].bool_or(false);
  request.project_name = params["project_name"].string_or("");
  auto named = names_param(params["blocks"], "blocks");
  if (!named.ok()) return session.fail(errc::kInvalidParams, named.error().message);
  auto profiles = names_param(params["profiles"], "profiles");
  if (!profiles.ok()) return session.fail(errc::kInvalidParams, profiles.error().message);
  request.blocks = std::move(*named);
  request.profiles = std::move(*profiles);
  bool wait = params["wait"].bool_or(true);
  if (!is_host_absolute_path(request.cwd))
    return session.fail(errc::kInvalidParams, "\"cwd\" must be an absolute path");
  if (!request.file.empty() && !is_host_absolute_path(request.file))
    return session.fail(errc::kInvalidParams, "\"file\" must be an absolute path");

  auto stack_name = std::make_shared<std::string>();
  auto progress = [session](const BlockProgress& p) mutable {
    session.event("progress",
                  Json::object({{"block", p.block},
                                {"state", std::string(to_string(p.state))},
                                {"health", std::string(health_of(p.state, p.has_health_check))},
                                {"message", p.reason}}));
  };
  // An unchanged stack is answered from inside daemon_.up(), before its name is known here:
  // keep that result and answer once the name is set below.
  auto early = std::make_shared<std::optional<Status>>();
  auto answer = [this, session, stack_name, wait, early](Status result) mutable {
    if (!wait) return;  // answered when the stack was loaded
    if (stack_name->empty()) {
      *early = std::move(result);
      return;
    }
    if (!result.ok()) {
      // Name the block that failed, with the last lines of its log.
      for (const auto& row : daemon_.supervisor().ps_with_shared(*stack_name)) {
        if (row.state != BlockState::failed) continue;
        Json tail = Json::array();
        auto lines = daemon_.supervisor().tail(row.stack, row.block, 20);
        if (lines.ok())
          for (const auto& l : *lines)
            if (l.stream != LogStream::daemon) tail.push_back(l.text);
        return session.fail(errc::kFailed, result.error().message,
                            Json::object({{"block", row.block}, {"log_tail", tail}}));
      }
      return session.fail(code_for(result.error()), result.error().message);
    }
    Json blocks = Json::array();
    for (const auto& row : daemon_.supervisor().ps_with_shared(*stack_name))
      blocks.push_back(ps_row(row));
    session.reply(Json::object({{"stack", *stack_name}, {"blocks", blocks}}));
  };
  auto started = daemon_.up(request, progress, answer);
  if (!started.ok()) {
    const Error& error = started.error();
    if (error.code == UV_ECANCELED) return session.fail(errc::kShuttingDown, error.message);
    if (error.code == UV_EBUSY) return session.fail(errc::kBusy, error.message);
    if (error.code == UV_EIO) return session.fail(errc::kFailed, error.message);  // state file
    if (error.code == UV_EEXIST) return session.fail(errc::kBusy, error.message);
    return session.fail(errc::kInvalidStack, error.message);
  }
  *stack_name = *started;
  // Every block of the stack, in start order, before (or among) their progress: a live display
  // shows the blocks still waiting for their dependencies too.
  Json planned = Json::array();
  for (const auto& row : daemon_.supervisor().ps_with_shared(*stack_name))
    planned.push_back(ps_row(row));
  if (const StackRunner* runner = daemon_.supervisor().stack(*stack_name))
    for (const auto& warning : runner->spec().warnings)
      session.event("warning", Json::object({{"message", warning}}));
  session.event("stack", Json::object({{"stack", *stack_name}, {"blocks", planned}}));
  if (early->has_value()) answer(std::move(**early));
  if (!wait) {
    // --detach: answer once the stack is loaded and starting.
    Json blocks = Json::array();
    for (const auto& row : daemon_.supervisor().ps_with_shared(*stack_name))
      blocks.push_back(ps_row(row));
    session.reply(Json::object({{"stack", *stack_name}, {"blocks", blocks}}));
  }
}

// The stack brought up from `file`, or "" when none is.
std::string DaemonHandlers::stack_of_file(const std::string& file) const {
  std::string stack;
  if (!file.empty())
    for (const auto& record : daemon_.records())
      if (record.request.file == file) stack = record.name;
  return stack;
}

void DaemonHandlers::down(Session session, const Json& params) {
  std::string stack = params["stack"].string_or("");
  std::string file = params["file"].string_or("");
  auto names = names_param(params["names"], "names");
  if (!names.ok()) return session.fail(errc::kInvalidParams, names.error().message);
  // One word and no -f: a stack that is up (or recorded) by that name, as always; else the
  // words are blocks (BLOCK or STACK/BLOCK) of the stack of -f, of the current directory's
  // stack file ("hint_file"), or of the one stack that is up.
  if (names->size() == 1 && file.empty() && stack.empty()) {
    const std::string& word = names->front();
    bool recorded = std::any_of(daemon_.records().begin(), daemon_.records().end(),
                                [&](const StackRecord& r) { return r.name == word; });
    if (recorded || daemon_.supervisor().has_stack(word)) {
      stack = word;
      names->clear();
    }
  }
  if (!names->empty()) {
    std::string hint = stack;
    if (hint.empty()) hint = stack_of_file(file);
    if (hint.empty() && !file.empty())
      return session.fail(errc::kNotFound, "no stack from " + file + " is up");
    if (hint.empty()) hint = stack_of_file(params["hint_file"].string_or(""));
    std::vector<std::string> blocks;
    std::string in_stack;
    for (const auto& name : *names) {
      auto target = resolve_block_name(name, hint);
      // A shared block by the stack's own name for it: the stack lets go of it (the instance
      // stops only when no other stack uses it), not a `down` of the shared stack.
      if (target.ok() && target->stack == kSharedStack && !hint.empty() &&
          name.find('/') == std::string::npos)
        target = Target{hint, name};
      if (!target.ok() && names->size() == 1 && file.empty() && stack.empty() &&
          name.find('/') == std::string::npos)
        return session.fail(code_for(target.error()),
                            "stack " + name + " is not up (" + target.error().message + ")");
      if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
      if (!in_stack.empty() && target->stack != in_stack)
        return session.fail(errc::kInvalidParams, "the blocks are in two stacks (" + in_stack +
                                                      ", " + target->stack +
                                                      "): one `down` at a time");
      in_stack = target->stack;
      blocks.push_back(target->block);
    }
    return daemon_.down_blocks(
        in_stack, blocks,
        [this, session, in_stack](Status result, std::vector<std::string> stopped) mutable {
          if (!result.ok()) return session.fail(code_for(result.error()), result.error().message);
          if (!daemon_.supervisor().has_stack(in_stack)) drop_followers_of(in_stack);
          Json list = Json::array();
          for (const auto& block : stopped) list.push_back(block);
          session.reply(Json::object({{"stack", in_stack},
                                      {"stopped", list},
                                      {"stack_down", !daemon_.supervisor().has_stack(in_stack)}}));
        });
  }
  if (stack.empty() && !file.empty()) {
    stack = stack_of_file(file);
    if (stack.empty()) return session.fail(errc::kNotFound, "no stack from " + file + " is up");
  }
  if (stack.empty()) {
    auto resolved = resolve_stack(params);
    if (!resolved.ok()) return session.fail(code_for(resolved.error()), resolved.error().message);
    stack = *resolved;
  }
  Json stopped = Json::array();
  for (const auto& row : daemon_.supervisor().ps(stack)) stopped.push_back(row.block);
  // --volumes: the stack's own volume directory, once nothing runs on it any more. A volume
  // bound from a host path of the user's is not the stack's to remove.
  std::string volumes;
  if (params["volumes"].bool_or(false))
    if (const StackRunner* runner = daemon_.supervisor().stack(stack))
      volumes = runner->spec().storage_root + "/volumes/" + stack;
  daemon_.down(stack, [this, session, stack, stopped, volumes](Status result) mutable {
    if (!result.ok()) return session.fail(code_for(result.error()), result.error().message);
    drop_followers_of(stack);
    Json reply = Json::object({{"stack", stack}, {"stopped", stopped}});
    if (!volumes.empty()) {
      uint64_t bytes = disk_usage(volumes);
      if (auto removed = remove_tree(volumes); !removed.ok())
        return session.fail(errc::kFailed, "stack " + stack + " is down, but its volumes stay: " +
                                               removed.error().message);
      reply.set("volumes", Json::object({{"path", volumes}, {"bytes", bytes}}));
    }
    session.reply(reply);
  });
}

void DaemonHandlers::ps(Session session, const Json& params) {
  std::string stack = params["stack"].string_or("");
  std::string file = params["file"].string_or("");
  if (stack.empty() && !file.empty()) {
    for (const auto& record : daemon_.records())
      if (record.request.file == file) stack = record.name;
    if (stack.empty()) return session.fail(errc::kNotFound, "no stack from " + file + " is up");
  }
  if (!stack.empty() && !daemon_.supervisor().has_stack(stack))
    return session.fail(errc::kNotFound, "stack " + stack + " is not up");
  Json rows = Json::array();
  for (const auto& row : daemon_.supervisor().ps_with_shared(stack)) rows.push_back(ps_row(row));
  session.reply(Json::object({{"v", 1}, {"blocks", rows}}));
}

void DaemonHandlers::status(Session session, const Json& params) {
  auto target = resolve_block(params);
  if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
  const StackRunner* stack = daemon_.supervisor().stack(target->stack);
  for (const auto& row : daemon_.supervisor().ps(target->stack)) {
    if (row.block != target->block) continue;
    Json result = ps_row(row);
    std::string logs_dir = stack->log_directory(row.sandbox_id);
    Json volumes = Json::array();
    std::string tmp;
    for (const auto& block : stack->spec().blocks) {
      if (block.name != row.block) continue;
      auto policy = parse_json(policy_to_json(masked_policy(block)));
      result.set("policy", policy.ok() ? *policy : Json());
      result.set("restart", std::string(to_string(block.restart)));
      for (const auto& bind : block.policy.read_write)
        volumes.push_back(Json::object({{"host", bind.source}, {"sandbox", bind.target()}}));
      tmp = block.policy.host_tmp_dir;
    }
    Json logs =
        Json::object({{"stdout", logs_dir + "/stdout.log"}, {"stderr", logs_dir + "/stderr.log"}});
    result.set("logs", logs);
    result.set("log_error", row.log_error.empty() ? Json() : Json(row.log_error));
    result.set("log_levels", Json::object({{"warn", static_cast<int64_t>(row.log_warnings)},
                                           {"error", static_cast<int64_t>(row.log_errors)},
                                           {"fatal", static_cast<int64_t>(row.log_fatals)}}));
    result.set("paths", Json::object({{"volumes", volumes},
                                      {"tmp", tmp.empty() ? Json() : Json(tmp)},
                                      {"logs", logs_dir}}));
    result.set(
        "last_exit",
        row.last_exit
            ? Json::object({{"code", row.last_exit->code},
                            {"signal", row.last_exit->signal},
                            {"at", format_timestamp(static_cast<int64_t>(row.last_exit->at_ms))},
                            {"message", row.last_exit->description}})
            : Json());
    result.set(
        "last_health",
        row.last_health
            ? Json::object({{"ok", row.last_health->ok},
                            {"at", format_timestamp(static_cast<int64_t>(row.last_health->at_ms))},
                            {"message", row.last_health->message}})
            : Json());
    result.set("limits", limits_json(row, *stack));
    return session.reply(Json::object({{"v", 1}, {"block", result}}));
  }
  session.fail(errc::kNotFound, "no block " + target->block);
}

void DaemonHandlers::logs(Session session, const Json& params) {
  auto filter = line_filter(params["streams"], params["level"]);
  if (!filter.ok()) return session.fail(errc::kInvalidParams, filter.error().message);
  const Json& batch = params["batch"];
  Follower::Batch batching = Follower::Batch::none;
  if (batch.is_bool() && batch.as_bool())
    batching = Follower::Batch::lines;
  else if (batch.is_string() && batch.as_string() == "text")
    batching = Follower::Batch::text;
  else if (!batch.is_null() && !batch.is_bool())
    return session.fail(errc::kInvalidParams, "\"batch\" is true, false or \"text\"");
  // Each named block ("BLOCK" or "STACK/BLOCK") through the one resolver; none named: every
  // block of the one stack meant.
  std::vector<Target> targets;
  if (params["blocks"].is_array())
    for (const auto& b : params["blocks"].as_array()) {
      if (!b.is_string()) continue;
      auto target = resolve_block_name(b.as_string(), params["stack"].string_or(""));
      if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
      targets.push_back(std::move(*target));
    }
  if (targets.empty()) {
    auto stack = resolve_stack(params);
    if (!stack.ok()) return session.fail(code_for(stack.error()), stack.error().message);
    for (const auto& row : daemon_.supervisor().ps(*stack)) targets.push_back({*stack, row.block});
  }
  size_t tail = static_cast<size_t>(std::max<int64_t>(0, params["tail"].int_or(10)));
  int64_t since = params["since"].int_or(0);

  // The tails of every block, merged by time: the last `tail` lines of the streams asked for.
  struct Tagged {
    const Target* target;
    LogLine line;
  };
  std::vector<Tagged> lines;
  for (const auto& target : targets) {
    auto got = daemon_.supervisor().tail(target.stack, target.block, SIZE_MAX);
    if (!got.ok()) return session.fail(code_for(got.error()), got.error().message);
    std::vector<LogLine> kept;
    for (auto& line : *got)
      if (line.time_ms >= since && filter->wants(line)) kept.push_back(std::move(line));
    size_t skip = kept.size() > tail ? kept.size() - tail : 0;
    for (size_t i = skip; i < kept.size(); ++i) lines.push_back({&target, std::move(kept[i])});
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.line.time_ms < b.line.time_ms; });
  for (const auto& [target, line] : lines)
    session.event(
        "line", log_line_event(target->stack, target->block, line, format_timestamp(line.time_ms)));
  if (!params["follow"].bool_or(false)) return session.reply(Json::object());

  const bool files = params["files"].bool_or(false);
  auto& list = followers_[session.serial()];
  for (const auto& target : targets) {
    auto follower = std::make_unique<Follower>();
    follower->session = session;
    follower->stack = target.stack;
    follower->block = target.block;
    follower->filter = *filter;
    follower->batch = batching;
    // The client follows the block's files from where the tail above ended; a block whose
    // files cannot be found is followed with events, as without "files".
    if (files) {
      // Only once the client has the event: a full queue skips it, and the block would then
      // be followed by nobody.
      auto event = log_files_event(target.stack, target.block);
      if (event && session.event("files", *event) == ipc::EventOutcome::sent) {
        follower->asked = batching;
        follower->batch = Follower::Batch::files;
      }
    }
    auto id = daemon_.supervisor().follow(target.stack, target.block, follower.get());
    if (!id.ok()) continue;
    follower->id = *id;
    list.push_back(std::move(follower));
  }
}

// Where a block's log files are, and where they end now (docs/ipc.md `files`): each file by
// inode, so that a client that opens it after a rotation still finds where to start. Written on
// this loop, so they end where the block's ring ends. None when the directory is not there or
// a file is not being written (the block is followed with events).
std::optional<Json> DaemonHandlers::log_files_event(const std::string& stack_name,
                                                    const std::string& block) {
#ifdef _WIN32
  // The Windows CLI does not ask (no follower of files there yet): events, as before.
  (void)stack_name;
  (void)block;
  return std::nullopt;
#else
  const StackRunner* stack = daemon_.supervisor().stack(stack_name);
  if (stack == nullptr) return std::nullopt;
  for (const auto& row : daemon_.supervisor().ps(stack_name)) {
    if (row.block != block) continue;
    if (!row.log_error.empty()) return std::nullopt;
    const std::string directory = stack->log_directory(row.sandbox_id);
    struct stat info {};
    if (::lstat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return std::nullopt;
    // A file by its inode and, where the file system keeps it, its birth (an inode can be
    // given to a newer file once rotations have deleted this one), all of one open file.
    auto where = [&](const char* name) {
      const UniqueFd file(
          ::open((directory + "/" + name).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      struct stat held {};
      if (!file.valid() || ::fstat(file.get(), &held) != 0 || !S_ISREG(held.st_mode))
        return Json::object({{"inode", 0}, {"size", 0}, {"born", 0}});
      return Json::object({{"inode", static_cast<int64_t>(held.st_ino)},
                           {"size", static_cast<int64_t>(held.st_size)},
                           {"born", static_cast<int64_t>(file_birth_us(file.get(), ""))}});
    };
    return Json::object({{"stack", stack_name},
                         {"block", block},
                         {"directory", directory},
                         {"stdout", where("stdout.log")},
                         {"stderr", where("stderr.log")}});
  }
  return std::nullopt;
#endif
}

void DaemonHandlers::exec(Session session, const Json& params) {
  auto target = resolve_block(params);
  if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
  for (const auto& row : daemon_.supervisor().ps(target->stack)) {
    if (row.block != target->block) continue;
    if (row.pid <= 0 || !has_process(row.state))
      return session.fail(errc::kFailed, "block " + row.block + " is " +
                                             std::string(to_string(row.state)) + ", not running");
    // The block's own environment (PGHOST, PATH, ...) and working directory, so that CMD sees
    // what the block sees. It may hold secret values: the peer is the same uid (checked on
    // connect), and the CLI hands them on through the launcher's environment, never its
    // command line.
    Json environment = Json::object();
    std::string cwd, sandbox_id;
    // A restricted-token block cannot be joined (its token is not ours to borrow): CMD runs
    // under a monitor of its own, with a token planned from the block's policy. Those words
    // are the spawner's, so the CLI takes them as they are instead of building --join ones.
    Json launcher;
    if (const StackRunner* stack = daemon_.supervisor().stack(target->stack))
      for (const BlockRunner* runner : stack->blocks())
        if (runner->spec().name == target->block) {
          cwd = runner->spec().policy.working_dir;
          sandbox_id = runner->spec().policy.name;
          std::vector<std::string> names;
          for (const auto& [name, value] : runner->spec().policy.environment) {
            environment.set(name, value);
            names.push_back(name);
          }
          if (row.sandbox == SandboxKind::restricted_token) {
            launcher = Json::array();
            for (const std::string& word : runner->join_argv({}, names)) launcher.push_back(word);
          }
        }
    bool passthrough = row.sandbox == SandboxKind::passthrough;
    Json reply = Json::object({{"lockbox", passthrough ? Json() : Json(lockbox_)},
                               {"join_pid", row.pid},
                               {"sandbox_id", sandbox_id},
                               {"sandbox", std::string(to_string(row.sandbox))},
                               {"environment", environment},
                               {"cwd", cwd}});
    if (launcher.is_array()) {
      // No words while the block is not running its command (its init script runs): say so,
      // rather than hand the CLI nothing it could mistake for "no sandbox".
      if (launcher.as_array().empty())
        return session.fail(errc::kFailed,
                            "block " + row.block + " is not running its command yet; try again");
      reply.set("launcher", std::move(launcher));
    }
    return session.reply(std::move(reply));
  }
  session.fail(errc::kNotFound, "no block " + target->block);
}

void DaemonHandlers::block_action(Session session, const Json& params, const std::string& action) {
  auto target = resolve_block(params);
  if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
  Supervisor& sv = daemon_.supervisor();
  // The block's row as it is when the action is over (or at once, without `wait`).
  auto answer = [this, session, target = *target](Status result) mutable {
    if (!result.ok()) return session.fail(code_for(result.error()), result.error().message);
    for (const auto& row : daemon_.supervisor().ps(target.stack))
      if (row.block == target.block) return session.reply(Json::object({{"block", ps_row(row)}}));
    session.reply(Json::object());
  };
  Supervisor::Done done;
  if (params["wait"].bool_or(false)) done = answer;
  Status sent = action == "restart" ? sv.restart_block(target->stack, target->block, done)
                : action == "stop"  ? sv.stop_block(target->stack, target->block, done)
                                    : sv.start_block(target->stack, target->block, done);
  if (!sent.ok()) return session.fail(code_for(sent.error()), sent.error().message);
  if (!done) answer(Status{});
}

void DaemonHandlers::kill(Session session, const Json& params) {
  auto target = resolve_block(params);
  if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
  int signum = SIGKILL;
  if (const Json& given = params["signal"]; given.is_string())
    signum = parse_signal_text(given.as_string());
  else if (given.is_int())
    signum = given.as_int() >= 1 && given.as_int() < NSIG ? static_cast<int>(given.as_int()) : 0;
  else if (!given.is_null())
    signum = 0;
  if (signum == 0)
    return session.fail(errc::kInvalidParams,
                        "\"signal\" must be a signal name (SIGTERM, KILL) or number");
  if (Status sent = daemon_.supervisor().kill_block(target->stack, target->block, signum);
      !sent.ok())
    return session.fail(sent.error().code == UV_ENOENT ? errc::kNotFound : errc::kFailed,
                        sent.error().message);
  for (const auto& row : daemon_.supervisor().ps(target->stack))
    if (row.block == target->block) return session.reply(Json::object({{"block", ps_row(row)}}));
  session.reply(Json::object());
}

// `events`: the history since `since`, then (with `follow`) every new one as it happens. The
// subscription lives until the client goes (on_close); a client that does not read loses
// events, counted in `skipped`, and never holds the bus up.
void DaemonHandlers::events(Session session, const Json& params) {
  auto filter = EventFilter::from_json(params["filters"]);
  if (!filter.ok()) return session.fail(errc::kInvalidParams, filter.error().message);
  const Json& since = params["since"];
  if (!since.is_null() && (!since.is_int() || since.as_int() < 0))
    return session.fail(errc::kInvalidParams, "\"since\" must be a Unix time in milliseconds");
  bool follow = params["follow"].bool_or(false);
  EventBus& bus = daemon_.supervisor().events();
  // Without --since a follower wants what comes next, a reader the whole history.
  if (!follow || !since.is_null())
    for (const auto& event : bus.history(static_cast<uint64_t>(since.int_or(0))))
      if (filter->matches(event)) session.event("event", event_json(event));
  if (!follow) return session.reply(Json::object());
  uint64_t serial = session.serial();
  uint64_t id = bus.subscribe([session, filter = *filter](const BusEvent& event) mutable {
    if (filter.matches(event)) session.event_lazily("event", [&] { return event_json(event); });
  });
  event_followers_[serial] = id;
}

// One `stats` request: the blocks it names (none: every block of every stack, or of `stack`,
// looked up again at each sample), the last sample of each, and the one timer that paces it.
struct DaemonHandlers::StatsWatch {
  Session session;
  std::vector<Target> named;
  std::string stack;  // when no block is named: only this stack's ("" = all)
  bool follow = false;
  uint64_t interval_ms = 1000;
  std::map<std::string, StatsSample> last;  // "STACK/BLOCK"
  bool sampled = false;  // the first sample was taken (with no block up, `last` stays empty)
  UvHandle<uv_timer_t> timer;
};

void DaemonHandlers::stats(Session session, const Json& params) {
  auto watch = std::make_unique<StatsWatch>();
  watch->session = session;
  watch->follow = params["follow"].bool_or(false);
  const Json& interval = params["interval_ms"];
  if (!interval.is_null() &&
      (!interval.is_int() || interval.as_int() < 100 || interval.as_int() > 60000))
    return session.fail(errc::kInvalidParams, "\"interval_ms\" must be 100..60000");
  watch->interval_ms = static_cast<uint64_t>(interval.int_or(1000));
  if (params["blocks"].is_array())
    for (const auto& b : params["blocks"].as_array()) {
      if (!b.is_string()) return session.fail(errc::kInvalidParams, "\"blocks\" holds names");
      auto target = resolve_block_name(b.as_string(), params["stack"].string_or(""));
      if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
      watch->named.push_back(std::move(*target));
    }
  if (watch->named.empty() && params["stack"].is_string()) {
    auto stack = resolve_stack(params);
    if (!stack.ok()) return session.fail(code_for(stack.error()), stack.error().message);
    watch->stack = *stack;
  }
  StatsWatch& ref = *watch;
  int status = ref.timer.init(
      [&](uv_timer_t* t) { return uv_timer_init(daemon_.supervisor().loop(), t); }, this);
  if (status < 0) return session.fail(errc::kInternal, uv_strerror(status));
  uint64_t serial = session.serial();
  stats_watches_[serial] = std::move(watch);
  stats_tick(ref);  // the first sample now: the first CPU % needs one interval
}

void DaemonHandlers::stats_tick(StatsWatch& watch) {
  Supervisor& sv = daemon_.supervisor();
  ProcessTable table = ProcessTable::read();
  uint64_t now = uv_now(sv.loop());
  bool first = !watch.sampled;
  watch.sampled = true;
  Json rows = Json::array();
  std::map<std::string, StatsSample> next;
  auto sample_row = [&](const BlockStatus& row) {
    std::string key = row.stack + "/" + row.block;
    int pid = row.pid > 0 && has_process(row.state) ? row.pid : 0;
    StatsSample sample = sample_block(table, pid, pid ? row.usage : std::nullopt, now);
    auto before = watch.last.find(key);
    Json out = Json::object({{"stack", row.stack},
                             {"name", row.block},
                             {"sandbox_id", row.sandbox_id},
                             {"state", std::string(to_string(row.state))}});
    Json fields = stats_fields(before != watch.last.end() ? before->second : StatsSample{}, sample);
    for (auto& [name, value] : fields.as_object()) out.set(name, std::move(value));
    out.set("uptime_s", pid ? Json(static_cast<int64_t>(row.uptime_ms / 1000)) : Json());
    next[key] = sample;
    rows.push_back(std::move(out));
  };
  bool any = false;
  for (const auto& name : sv.stacks()) {
    if (!watch.stack.empty() && name != watch.stack) continue;
    for (const auto& row : sv.ps(name)) {
      bool wanted = watch.named.empty();
      for (const auto& target : watch.named)
        wanted = wanted || (target.stack == row.stack && target.block == row.block);
      if (!wanted) continue;
      any = true;
      sample_row(row);
    }
  }
  watch.last = std::move(next);
  uint64_t serial = watch.session.serial();
  if (!first) {
    Json result = Json::object({{"v", 1}, {"interval_ms", watch.interval_ms}, {"blocks", rows}});
    if (!watch.follow || (!any && !watch.named.empty())) {
      // Done (or every block it named is gone): the answer ends the request.
      Session session = watch.session;
      stats_watches_.erase(serial);
      session.reply(result);
      return;
    }
    if (watch.session.event("stats", result) == ipc::EventOutcome::gone) {
      stats_watches_.erase(serial);
      return;
    }
  }
  uv_timer_start(
      watch.timer.get(),
      [](uv_timer_t* t) {
        auto* self = static_cast<DaemonHandlers*>(t->data);
        for (auto& [key, w] : self->stats_watches_)
          if (w->timer.get() == t) return self->stats_tick(*w);
      },
      watch.interval_ms, 0);
}

// `signal`: one signal to a running block's command (`watch: {action: signal}`).
void DaemonHandlers::signal(Session session, const Json& params) {
  auto target = resolve_block(params);
  if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
  int64_t number = params["signal"].int_or(0);
  if (number < 1 || number > 64)
    return session.fail(errc::kInvalidParams, "\"signal\" must be a signal number");
  Status sent =
      daemon_.supervisor().signal_block(target->stack, target->block, static_cast<int>(number));
  if (!sent.ok()) return session.fail(code_for(sent.error()), sent.error().message);
  session.reply(Json::object());
}

void DaemonHandlers::daemon_status(Session session) {
  Json stacks = Json::array();
  for (const auto& name : daemon_.supervisor().stacks()) {
    const StackRunner* stack = daemon_.supervisor().stack(name);
    Json blocks = Json::array();
    for (const auto* b : stack->blocks()) blocks.push_back(b->spec().name);
    stacks.push_back(
        Json::object({{"name", name}, {"file", stack->spec().file}, {"blocks", blocks}}));
  }
  session.reply(Json::object({{"pid", static_cast<int64_t>(::getpid())},
                              {"version", std::string(version())},
                              {"uptime_s", static_cast<int64_t>((wall_ms() - started_ms_) / 1000)},
                              {"home", daemon_.home()},
                              {"limits", daemon_.supervisor().limits_enforcement()},
                              {"stacks", stacks}}));
}

}  // namespace stackie
