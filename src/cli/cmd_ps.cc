// `stackie ps` and `stackie status`: the daemon's view of blocks, as a table or its JSON.
#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "policy/resource_limits.h"

namespace stackie::cli {

extern const char kPsUsage[] =
    "Usage: stackie ps [-f FILE | STACK] [--json]\n"
    "\n"
    "List blocks: NAME STATE HEALTH PID UPTIME RESTARTS PORTS SANDBOX. Ports read\n"
    "127.0.0.1:HOST->SANDBOX. Without -f or STACK, every stack (a STACK column is added when\n"
    "there are several). A shared instance (mode: shared) is listed once, as stack @shared,\n"
    "with the stacks that use it (USED BY); a stack's ps lists those it uses.\n"
    "\n"
    "Options:\n"
    "  -f, --file FILE  only the stack brought up from FILE\n"
    "      --json       the daemon's document verbatim ({\"v\":1,\"blocks\":[...]}, "
    "stackie-ipc(7))\n"
    "\n"
    "Exit status: 0, 1 no such stack, 2 usage error, 3 no daemon.\n";

extern const char kStatusUsage[] =
    "Usage: stackie status BLOCK [--json]\n"
    "\n"
    "Show one block (BLOCK or STACK/BLOCK): state, health, pid, ports, sandbox, paths, last\n"
    "exit and last health check, and how many of its log lines were warnings, errors, fatal.\n"
    "\n"
    "Options:\n"
    "      --json  the daemon's document verbatim ({\"v\":1,\"block\":{...}})\n"
    "\n"
    "Exit status: 0, 1 no such block, 2 usage error, 3 no daemon.\n";

namespace {

std::string text_of(const Json& value) {
  if (value.is_string()) return value.as_string();
  if (value.is_int()) return std::to_string(value.as_int());
  return "-";
}

// The backend, and the network when it is weaker than a namespace of the block's own (the
// host's network) or wider (outbound through the daemon's proxy). Windows has no network
// namespace at all: a restricted-token block listens on the host's loopback and can reach any
// port there, which the user must see (docs/platforms.md).
std::string sandbox_of(const Json& row) {
  std::string sandbox = text_of(row["sandbox"]);
  if (sandbox == "restricted-token") return sandbox + " (not network-isolated)";
  std::string network = row["network"].string_or("");
  if (sandbox != "none" && (network == "host" || network == "outbound"))
    sandbox += network == "host" ? " (host network)" : " (outbound)";
  return sandbox;
}

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], row[i].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

void print_binds(const char* label, const Json& binds) {
  if (!binds.is_array()) return;
  for (const auto& bind : binds.as_array()) {
    std::string source = text_of(bind["source"]);
    std::string dest = bind["dest"].string_or("");
    std::printf("    %-10s %s%s\n", label, source.c_str(),
                dest.empty() || dest == source ? "" : (" -> " + dest).c_str());
  }
}

// The sandbox policy in the daemon's status (SandboxPolicy JSON, stackie-lockbox(1)); its
// read-write paths are printed above it, with the block's other paths.
void print_policy(const Json& policy) {
  if (!policy.is_object()) return;
  std::printf("  policy:\n");
  std::printf("    network    %s\n", text_of(policy["network"]).c_str());
  std::printf("    identity   %s\n", text_of(policy["identity"]).c_str());
  std::string workdir = policy["working_dir"].string_or("");
  std::printf("    workdir    %s\n", workdir.empty() ? "/" : workdir.c_str());
  print_binds("read-only", policy["read_only"]);
  if (policy["tmpfs"].is_array())
    for (const auto& dest : policy["tmpfs"].as_array())
      std::printf("    tmpfs      %s\n", text_of(dest).c_str());
  if (policy["environment"].is_array())
    for (const auto& pair : policy["environment"].as_array())
      std::printf("    env        %s=%s\n", text_of(pair[0]).c_str(), text_of(pair[1]).c_str());
}

// "limits:  memory 2GiB, pids 1024, cpu unlimited, shm 64MiB", then how they are enforced and,
// from a cgroup, what the block uses now.
void print_limits(const Json& limits) {
  if (!limits.is_object()) return;
  std::string enforcement = text_of(limits["enforcement"]);
  if (enforcement.rfind("none", 0) == 0) {  // an unsandboxed block: nothing bounds it
    std::printf("  limits:     %s\n", enforcement.c_str());
    return;
  }
  ResourceLimits values;
  values.memory_bytes = static_cast<uint64_t>(limits["memory"].int_or(0));
  values.pids = static_cast<int>(limits["pids"].int_or(0));
  values.cpu_millis = static_cast<int>(limits["cpu_millis"].int_or(0));
  values.shm_bytes = static_cast<uint64_t>(limits["shm"].int_or(0));
  std::printf("  limits:     %s\n", describe_limits(values).c_str());
  std::printf("  enforced:   %s\n", enforcement.c_str());
  const Json& usage = limits["usage"];
  if (!usage.is_object()) return;
  auto bytes = [](const Json& value) {
    uint64_t n = static_cast<uint64_t>(value.int_or(0));
    return n == 0 ? std::string("-") : format_byte_size(n);
  };
  std::printf("  using:      memory %s (peak %s), %s processes, cpu %.1fs",
              bytes(usage["memory"]).c_str(), bytes(usage["memory_peak"]).c_str(),
              text_of(usage["pids"]).c_str(),
              static_cast<double>(usage["cpu_usec"].int_or(0)) / 1e6);
  if (usage["oom_kills"].int_or(0) > 0)
    std::printf(", %s killed at the memory limit", text_of(usage["oom_kills"]).c_str());
  if (usage["pids_refused"].int_or(0) > 0)
    std::printf(", %s forks refused at the pids limit", text_of(usage["pids_refused"]).c_str());
  std::printf("\n");
}

}  // namespace

int run_ps(std::span<char*> argv) {
  ArgWalker args("ps", argv);
  StackTarget target;
  bool json = false;
  while (!args.done()) {
    if (args.flag("", "--json"))
      json = true;
    else if (!take_stack_target(args, target))
      return usage_error("ps", "unknown option '" + std::string(args.current()) + "'");
    if (!args.error.empty()) return usage_error("ps", args.error);
  }
  std::string error;
  auto params = stack_target_params(target, /*cwd_default=*/false, error);
  if (!params) {
    std::fprintf(stderr, "stackie: %s\n", error.c_str());
    return kExitFailed;
  }
  auto connection = connect_daemon();
  if (!connection.client) return connection.exit_code;
  auto reply = connection.client->call("ps", *params);
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  const auto& result = reply->result();
  if (json) {
    print_json(result);
    return kExitOk;
  }
  const auto& blocks = result["blocks"];
  bool several_stacks = false;
  bool shared = false;  // a shared instance (stack "@shared"): who uses it
  if (blocks.is_array())
    for (const auto& row : blocks.as_array()) {
      if (row["stack"] != blocks[0]["stack"]) several_stacks = true;
      if (row["used_by"].is_array() && !row["used_by"].as_array().empty()) shared = true;
    }
  if (shared) several_stacks = true;  // its STACK, @shared, says what it is
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"NAME",   "STATE",    "HEALTH", "PID",
                                     "UPTIME", "RESTARTS", "PORTS",  "SANDBOX"};
  if (several_stacks) header.insert(header.begin(), "STACK");
  if (shared) header.push_back("USED BY");
  rows.push_back(header);
  if (blocks.is_array())
    for (const auto& row : blocks.as_array()) {
      std::vector<std::string> line = {text_of(row["name"]),           text_of(row["state"]),
                                       text_of(row["health"]),         text_of(row["pid"]),
                                       format_uptime(row["uptime_s"]), text_of(row["restarts"]),
                                       format_ports(row["ports"]),     sandbox_of(row)};
      if (line[6].empty()) line[6] = "-";
      if (several_stacks) line.insert(line.begin(), text_of(row["stack"]));
      if (shared) {
        std::string users;
        if (row["used_by"].is_array())
          for (const auto& user : row["used_by"].as_array())
            users += (users.empty() ? "" : ",") + text_of(user);
        line.push_back(users.empty() ? "-" : users);
      }
      rows.push_back(line);
    }
  print_table(rows);
  return kExitOk;
}

int run_status(std::span<char*> argv) {
  ArgWalker args("status", argv);
  std::string block;
  bool json = false;
  while (!args.done()) {
    if (args.flag("", "--json"))
      json = true;
    else if (args.current().starts_with("-"))
      return usage_error("status", "unknown option '" + std::string(args.current()) + "'");
    else if (block.empty()) {
      block = args.current();
      args.next();
    } else
      return usage_error("status", "one BLOCK at most");
  }
  if (block.empty()) return usage_error("status", "missing BLOCK");
  auto connection = connect_daemon();
  if (!connection.client) return connection.exit_code;
  auto reply = connection.client->call("status", Json::object({{"block", block}}));
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  if (json) {
    print_json(reply->result());
    return kExitOk;
  }
  const auto& b = reply->result()["block"];
  std::printf("%s/%s\n", text_of(b["stack"]).c_str(), text_of(b["name"]).c_str());
  std::printf("  state:      %s\n", text_of(b["state"]).c_str());
  std::printf("  health:     %s\n", text_of(b["health"]).c_str());
  std::printf("  pid:        %s\n", text_of(b["pid"]).c_str());
  std::printf("  uptime:     %s\n", format_uptime(b["uptime_s"]).c_str());
  std::printf("  restarts:   %s\n", text_of(b["restarts"]).c_str());
  std::printf("  ports:      %s\n", format_ports(b["ports"]).c_str());
  std::printf("  sandbox:    %s (%s)\n", text_of(b["sandbox"]).c_str(),
              text_of(b["sandbox_id"]).c_str());
  if (text_of(b["sandbox"]) == "linux-landlock")
    std::printf(
        "              weaker than linux-namespaces: host pids, hostname, uid and UDP\n"
        "              visible; served ports bound on all host addresses\n");
  std::printf("  restart:    %s\n", text_of(b["restart"]).c_str());
  print_limits(b["limits"]);
  const auto& exit = b["last_exit"];
  if (exit.is_object())
    std::printf("  last exit:  %s at %s\n", text_of(exit["message"]).c_str(),
                text_of(exit["at"]).c_str());
  else
    std::printf("  last exit:  -\n");
  const auto& health = b["last_health"];
  if (health.is_object())
    std::printf("  last check: %s at %s: %s\n", health["ok"].bool_or(false) ? "ok" : "failed",
                text_of(health["at"]).c_str(), text_of(health["message"]).c_str());
  else
    std::printf("  last check: -\n");
  std::string message = text_of(b["message"]);
  if (message != "-" && !message.empty())
    std::printf("  message:    %s\n", message.substr(0, message.find('\n')).c_str());
  const auto& paths = b["paths"];
  if (paths["volumes"].is_array())
    for (const auto& volume : paths["volumes"].as_array())
      std::printf(
          "  read-write: %s%s\n", text_of(volume["host"]).c_str(),
          volume["host"] == volume["sandbox"] ? "" : (" -> " + text_of(volume["sandbox"])).c_str());
  std::printf("  tmp:        %s\n", text_of(paths["tmp"]).c_str());
  const auto& logs = b["logs"];
  if (logs.is_object()) {
    std::printf("  stdout log: %s\n", text_of(logs["stdout"]).c_str());
    std::printf("  stderr log: %s\n", text_of(logs["stderr"]).c_str());
    if (b["log_error"].is_string())
      std::printf("  log files:  NOT WRITTEN: %s\n", b["log_error"].as_string().c_str());
  }
  const auto& levels = b["log_levels"];
  if (levels.is_object())
    std::printf("  log lines:  %lld warn, %lld error, %lld fatal (stackie logs --level warn)\n",
                static_cast<long long>(levels["warn"].int_or(0)),
                static_cast<long long>(levels["error"].int_or(0)),
                static_cast<long long>(levels["fatal"].int_or(0)));
  print_policy(b["policy"]);
  return kExitOk;
}

}  // namespace stackie::cli
