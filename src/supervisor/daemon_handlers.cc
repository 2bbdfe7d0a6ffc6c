#include "supervisor/daemon_handlers.h"

#include <optional>

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "base/version.h"

namespace stackie {

using ipc::Session;
namespace errc = ipc::errc;

namespace {

uint64_t wall_ms() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

std::string_view code_for(const Error& error) {
  if (error.code == UV_ENOENT) return errc::kNotFound;
  if (error.code == UV_EBUSY) return errc::kBusy;
  if (error.code == UV_ECANCELED) return errc::kShuttingDown;
  if (error.code == UV_EINVAL) return errc::kInvalidParams;
  return errc::kFailed;
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
    ports.push_back(Json::object({{"name", port.name},
                                  {"host", "127.0.0.1:" + std::to_string(host)},
                                  {"sandbox", port.port}}));
  }
  bool alive = row.pid > 0 && has_process(row.state);
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
      {"message", row.reason},
  });
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

Json line_event(const std::string& block, const LogLine& line) {
  return Json::object({{"block", block},
                       {"stream", std::string(to_string(line.stream))},
                       {"ts", format_timestamp(line.time_ms)},
                       {"text", line.text}});
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

}  // namespace

// One `logs -f` subscription of one block. offer() never blocks: a full client queue makes the
// server skip the event (and BlockLogs count it for the marker line).
struct DaemonHandlers::Follower final : LogSink {
  Session session;
  std::string stack;
  std::string block;
  uint64_t id = 0;
  bool offer(const LogLine& line) override {
    return session.event_lazily("line", [&] { return line_event(block, line); }) ==
           ipc::EventOutcome::sent;
  }
};

DaemonHandlers::DaemonHandlers(Daemon& daemon, std::string lockbox, uint64_t started_ms)
    : daemon_(daemon), lockbox_(std::move(lockbox)), started_ms_(started_ms) {}

DaemonHandlers::~DaemonHandlers() {
  for (auto& [serial, list] : followers_)
    for (auto& f : list) daemon_.supervisor().unfollow(f->stack, f->block, f->id);
}

void DaemonHandlers::on_close(const Session& session) {
  auto it = followers_.find(session.serial());
  if (it == followers_.end()) return;
  for (auto& f : it->second) daemon_.supervisor().unfollow(f->stack, f->block, f->id);
  followers_.erase(it);
}

void DaemonHandlers::drop_followers_of(const std::string& stack) {
  for (auto it = followers_.begin(); it != followers_.end();) {
    auto& list = it->second;
    bool ended = !list.empty() && list.front()->stack == stack;
    if (!ended) {
      ++it;
      continue;
    }
    Session session = list.front()->session;
    it = followers_.erase(it);  // the stack (and its BlockLogs) is gone already
    session.reply(Json::object());
  }
}

void DaemonHandlers::on_request(Session session, const ipc::Request& request) {
  const std::string& m = request.method;
  const Json& params = request.params;
  if (daemon_.stopping() && m != "daemon.status" && m != "ps" && m != "status" && m != "logs") {
    session.fail(errc::kShuttingDown, "the daemon is stopping");
    return;
  }
  if (m == "up") return up(session, params);
  if (m == "down") return down(session, params);
  if (m == "ps") return ps(session, params);
  if (m == "status") return status(session, params);
  if (m == "logs") return logs(session, params);
  if (m == "exec") return exec(session, params);
  if (m == "restart" || m == "stop" || m == "start") return block_action(session, params, m);
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
  if (stacks.size() == 1) return stacks[0];
  if (stacks.empty()) return Error{UV_ENOENT, "no stack is up"};
  return Error{UV_EINVAL, "several stacks are up: name one with \"stack\""};
}

Result<DaemonHandlers::Target> DaemonHandlers::resolve_block(const Json& params) const {
  std::string block = params["block"].string_or("");
  if (block.empty()) return Error{UV_EINVAL, "\"block\" is required"};
  std::string stack = params["stack"].string_or("");
  if (auto slash = block.find('/'); slash != std::string::npos) {
    stack = block.substr(0, slash);
    block = block.substr(slash + 1);
  }
  if (!stack.empty()) {
    if (!daemon_.supervisor().has_stack(stack))
      return Error{UV_ENOENT, "stack " + stack + " is not up"};
    return Target{stack, block};
  }
  std::vector<std::string> owners;
  for (const auto& row : daemon_.supervisor().ps())
    if (row.block == block) owners.push_back(row.stack);
  if (owners.empty()) return Error{UV_ENOENT, "no stack has a block " + block};
  if (owners.size() > 1)
    return Error{UV_EINVAL, "block " + block + " is in several stacks: name one with \"stack\""};
  return Target{owners[0], block};
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
  bool wait = params["wait"].bool_or(true);
  if (request.cwd.empty() || request.cwd[0] != '/')
    return session.fail(errc::kInvalidParams, "\"cwd\" must be an absolute path");
  if (!request.file.empty() && request.file[0] != '/')
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
      for (const auto& row : daemon_.supervisor().ps(*stack_name)) {
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
    for (const auto& row : daemon_.supervisor().ps(*stack_name)) blocks.push_back(ps_row(row));
    session.reply(Json::object({{"stack", *stack_name}, {"blocks", blocks}}));
  };
  auto started = daemon_.up(request, progress, answer);
  if (!started.ok()) {
    const Error& error = started.error();
    if (error.code == UV_ECANCELED) return session.fail(errc::kShuttingDown, error.message);
    return session.fail(errc::kInvalidStack, error.message);
  }
  *stack_name = *started;
  // Every block of the stack, in start order, before (or among) their progress: a live display
  // shows the blocks still waiting for their dependencies too.
  Json planned = Json::array();
  for (const auto& row : daemon_.supervisor().ps(*stack_name)) planned.push_back(ps_row(row));
  if (const StackRunner* runner = daemon_.supervisor().stack(*stack_name))
    for (const auto& warning : runner->spec().warnings)
      session.event("warning", Json::object({{"message", warning}}));
  session.event("stack", Json::object({{"stack", *stack_name}, {"blocks", planned}}));
  if (early->has_value()) answer(std::move(**early));
  if (!wait) {
    // --detach: answer once the stack is loaded and starting.
    Json blocks = Json::array();
    for (const auto& row : daemon_.supervisor().ps(*stack_name)) blocks.push_back(ps_row(row));
    session.reply(Json::object({{"stack", *stack_name}, {"blocks", blocks}}));
  }
}

void DaemonHandlers::down(Session session, const Json& params) {
  std::string stack = params["stack"].string_or("");
  std::string file = params["file"].string_or("");
  if (stack.empty() && !file.empty()) {
    for (const auto& record : daemon_.records())
      if (record.request.file == file) stack = record.name;
    if (stack.empty()) return session.fail(errc::kNotFound, "no stack from " + file + " is up");
  }
  if (stack.empty()) {
    auto resolved = resolve_stack(params);
    if (!resolved.ok()) return session.fail(code_for(resolved.error()), resolved.error().message);
    stack = *resolved;
  }
  Json stopped = Json::array();
  for (const auto& row : daemon_.supervisor().ps(stack)) stopped.push_back(row.block);
  daemon_.down(stack, [this, session, stack, stopped](Status result) mutable {
    if (!result.ok()) return session.fail(code_for(result.error()), result.error().message);
    drop_followers_of(stack);
    session.reply(Json::object({{"stack", stack}, {"stopped", stopped}}));
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
  for (const auto& row : daemon_.supervisor().ps(stack)) rows.push_back(ps_row(row));
  session.reply(Json::object({{"v", 1}, {"blocks", rows}}));
}

void DaemonHandlers::status(Session session, const Json& params) {
  auto target = resolve_block(params);
  if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
  const StackRunner* stack = daemon_.supervisor().stack(target->stack);
  for (const auto& row : daemon_.supervisor().ps(target->stack)) {
    if (row.block != target->block) continue;
    Json result = ps_row(row);
    std::string logs_dir = stack->spec().storage_root + "/logs/" + row.sandbox_id;
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
    return session.reply(Json::object({{"v", 1}, {"block", result}}));
  }
  session.fail(errc::kNotFound, "no block " + target->block);
}

void DaemonHandlers::logs(Session session, const Json& params) {
  auto stack = resolve_stack(params);
  if (!stack.ok()) return session.fail(code_for(stack.error()), stack.error().message);
  std::vector<std::string> blocks;
  if (params["blocks"].is_array())
    for (const auto& b : params["blocks"].as_array())
      if (b.is_string()) blocks.push_back(b.as_string());
  if (blocks.empty())
    for (const auto& row : daemon_.supervisor().ps(*stack)) blocks.push_back(row.block);
  size_t tail = static_cast<size_t>(std::max<int64_t>(0, params["tail"].int_or(10)));
  int64_t since = params["since"].int_or(0);

  // The tails of every block, merged by time.
  std::vector<std::pair<std::string, LogLine>> lines;
  for (const auto& block : blocks) {
    auto got = daemon_.supervisor().tail(*stack, block, tail);
    if (!got.ok()) return session.fail(code_for(got.error()), got.error().message);
    for (auto& line : *got)
      if (line.time_ms >= since) lines.emplace_back(block, std::move(line));
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) {
    return a.second.time_ms < b.second.time_ms;
  });
  for (const auto& [block, line] : lines) session.event("line", line_event(block, line));
  if (!params["follow"].bool_or(false)) return session.reply(Json::object());

  auto& list = followers_[session.serial()];
  for (const auto& block : blocks) {
    auto follower = std::make_unique<Follower>();
    follower->session = session;
    follower->stack = *stack;
    follower->block = block;
    auto id = daemon_.supervisor().follow(*stack, block, follower.get());
    if (!id.ok()) continue;
    follower->id = *id;
    list.push_back(std::move(follower));
  }
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
    if (const StackRunner* stack = daemon_.supervisor().stack(target->stack))
      for (const BlockRunner* runner : stack->blocks())
        if (runner->spec().name == target->block) {
          cwd = runner->spec().policy.working_dir;
          sandbox_id = runner->spec().policy.name;
          for (const auto& [name, value] : runner->spec().policy.environment)
            environment.set(name, value);
        }
    bool passthrough = row.sandbox == SandboxKind::passthrough;
    return session.reply(Json::object({{"lockbox", passthrough ? Json() : Json(lockbox_)},
                                       {"join_pid", row.pid},
                                       {"sandbox_id", sandbox_id},
                                       {"sandbox", std::string(to_string(row.sandbox))},
                                       {"environment", environment},
                                       {"cwd", cwd}}));
  }
  session.fail(errc::kNotFound, "no block " + target->block);
}

void DaemonHandlers::block_action(Session session, const Json& params, const std::string& action) {
  auto target = resolve_block(params);
  if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
  Supervisor& sv = daemon_.supervisor();
  Status done = action == "restart" ? sv.restart_block(target->stack, target->block)
                : action == "stop"  ? sv.stop_block(target->stack, target->block)
                                    : sv.start_block(target->stack, target->block);
  if (!done.ok()) return session.fail(code_for(done.error()), done.error().message);
  for (const auto& row : sv.ps(target->stack))
    if (row.block == target->block) return session.reply(Json::object({{"block", ps_row(row)}}));
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
                              {"stacks", stacks}}));
}

}  // namespace stackie
