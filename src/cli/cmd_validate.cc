// `stackie validate [-f FILE] [--json] [--no-sandbox]`: loads and resolves a stack without a
// daemon and prints the result (stackie-validate in stackie(1); JSON shape in
// stackie-stack.yml(5)). Secret values are masked everywhere they appear.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "base/json.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "stack/block_def.h"
#include "stack/loader.h"

namespace stackie::cli {

extern const char kValidateUsage[] =
    "Usage: stackie validate [-f FILE] [--json] [--no-sandbox] [--profile NAME]... [BLOCK...]\n"
    "\n"
    "Load and resolve a stack file without a daemon and print the result: blocks in start\n"
    "order, ports, environment after interpolation (secrets masked) with where each variable\n"
    "came from, and each block's sandbox policy. Without -f, looks for stackie-stack.yml,\n"
    "stackie-stack.yaml, stackie.yml, stackie.yaml in the current directory. The blocks are\n"
    "those `stackie up` would start with the same --profile and BLOCK arguments.\n"
    "\n"
    "Options:\n"
    "  -f, --file FILE  the stack file\n"
    "      --profile NAME\n"
    "                   also the blocks with this profile (repeatable)\n"
    "      --json       one JSON document ({\"v\":1,...}; see stackie-stack.yml(5))\n"
    "      --no-sandbox show the stack as `up --no-sandbox` would run it\n"
    "\n"
    "Exit status: 0 valid, 1 the stack does not load (one FILE:LINE:COL line on stderr),\n"
    "2 usage error.\n";

namespace {

constexpr const char* kMask = "********";

struct Masker {
  const ResolvedBlock& block;
  std::string operator()(std::string text) const {
    for (const auto& secret : block.secret_values) {
      if (secret.empty()) continue;
      size_t at = 0;
      while ((at = text.find(secret, at)) != std::string::npos) {
        text.replace(at, secret.size(), kMask);
        at += std::strlen(kMask);
      }
    }
    return text;
  }
  bool is_secret(const std::string& name) const {
    for (const auto& secret : block.secret_names)
      if (secret == name) return true;
    return false;
  }
};

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789_-./=:,@%+*") == std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string join_argv(const std::vector<std::string>& argv, const Masker& mask) {
  std::string out;
  for (const auto& arg : argv) out += (out.empty() ? "" : " ") + shell_quote(mask(arg));
  return out;
}

std::string seconds(Milliseconds ms) {
  long long count = ms.count();
  if (count % 1000 == 0) return std::to_string(count / 1000) + "s";
  return std::to_string(count) + "ms";
}

// ---- text -----------------------------------------------------------------------------------

void print_init(const std::vector<InitStep>& steps, const Masker& mask, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  for (const auto& step : steps) {
    if (!step.if_not_exists.empty()) {
      std::printf("%sif not exists %s:\n", pad.c_str(), mask(step.if_not_exists).c_str());
      print_init(step.then, mask, indent + 2);
    } else if (!step.append_path.empty()) {
      std::printf("%sappend %zu bytes to %s\n", pad.c_str(), step.append_text.size(),
                  mask(step.append_path).c_str());
    } else {
      std::printf("%srun %s\n", pad.c_str(), join_argv(step.run, mask).c_str());
    }
  }
}

void print_block(size_t index, const ResolvedBlock& block) {
  Masker mask{block};
  std::printf("\n%zu. %s (sandbox %s)%s\n", index + 1, block.name.c_str(), block.sandbox_id.c_str(),
              block.first_party ? ", first-party" : "");
  std::printf("   definition   %s\n", block.definition_file.c_str());
  std::printf("   command      %s\n", join_argv(block.command, mask).c_str());
  for (const auto& serve : block.serves)
    std::printf("   serves       %s: port %d, type %s, host port %d\n", serve.name.c_str(),
                serve.port, serve.type.c_str(), serve.host_port ? serve.host_port : serve.port);
  for (const auto& consume : block.consumes)
    std::printf("   consumes     %s: %s.%s at 127.0.0.1:%d\n", consume.name.c_str(),
                consume.provider.c_str(), consume.provider_port.c_str(), consume.local_port);
  std::string deps;
  for (const auto& dep : block.depends_on) deps += (deps.empty() ? "" : ", ") + dep;
  std::printf("   depends on   %s\n", deps.empty() ? "-" : deps.c_str());
  const HealthCheck& health = block.health;
  switch (health.kind) {
    case HealthCheck::Kind::none: std::printf("   health       none\n"); break;
    case HealthCheck::Kind::tcp:
      std::printf("   health       tcp %s (port %d)", health.port_name.c_str(), health.port);
      break;
    case HealthCheck::Kind::http:
      std::printf("   health       http GET %s on %s (port %d), expect %d",
                  health.http_path.c_str(), health.port_name.c_str(), health.port,
                  health.http_status);
      break;
    case HealthCheck::Kind::exec:
      std::printf("   health       exec %s", join_argv(health.argv, mask).c_str());
      break;
  }
  if (health.kind != HealthCheck::Kind::none)
    std::printf("; every %s, timeout %s, %d retries, start period %s\n",
                seconds(health.interval).c_str(), seconds(health.timeout).c_str(), health.retries,
                seconds(health.start_period).c_str());
  std::printf("   restart      %s; stop with %s, then SIGKILL after %s\n",
              std::string(to_string(block.restart)).c_str(),
              stop_signal_name(block.stop_signal).c_str(), seconds(block.stop_timeout).c_str());
  if (!block.init.empty()) {
    std::printf("   init\n");
    print_init(block.init, mask, 5);
  }
  if (!block.profiles.empty()) {
    std::string profiles;
    for (const auto& profile : block.profiles) profiles += (profiles.empty() ? "" : ", ") + profile;
    std::printf("   profiles     %s\n", profiles.c_str());
  }
  // Each variable with where it came from (env_file, environment, the definition, a default),
  // the later sources having overridden the earlier ones.
  std::printf("   environment\n");
  const auto& sources = block.environment_sources;
  int width = 0;
  for (const auto& source : sources) width = std::max(width, static_cast<int>(source.size()));
  for (size_t i = 0; i < block.policy.environment.size(); ++i) {
    const auto& [name, value] = block.policy.environment[i];
    std::printf("     %-*s  %s=%s\n", width, i < sources.size() ? sources[i].c_str() : "?",
                name.c_str(), mask.is_secret(name) ? kMask : mask(value).c_str());
  }
  const SandboxPolicy& policy = block.policy;
  if (!block.sandboxed) {
    std::printf("   sandbox      OFF (platforms/--no-sandbox/settings): runs as a plain process\n");
    return;
  }
  std::printf("   sandbox      network %s, identity %s, working dir %s\n",
              to_string(policy.network).data(), to_string(policy.identity).data(),
              policy.working_dir.empty() ? "/" : policy.working_dir.c_str());
  for (const auto& bind : policy.read_only)
    std::printf("     read-only  %s\n", bind.target().c_str());
  for (const auto& bind : policy.read_write)
    std::printf("     read-write %s\n", bind.target().c_str());
  if (!policy.host_tmp_dir.empty())
    std::printf("     tmp        %s\n", policy.host_tmp_dir.c_str());
  std::printf("   limits       %s\n", describe_limits(policy.limits).c_str());
}

void print_text(const ResolvedStack& stack) {
  std::printf("stack %s (%s)\n", stack.name.c_str(), stack.file.c_str());
  std::printf("storage %s\n", stack.storage_root.c_str());
  std::printf("start order:");
  for (const auto& block : stack.blocks) std::printf(" %s", block.name.c_str());
  std::printf("\n");
  for (const auto& [name, profiles] : stack.skipped) {
    std::string list;
    for (const auto& profile : profiles) list += (list.empty() ? "" : ", ") + profile;
    std::printf("not started: %s (%s)\n", name.c_str(),
                list.empty() ? "not named" : ("profiles: " + list).c_str());
  }
  for (size_t i = 0; i < stack.blocks.size(); ++i) print_block(i, stack.blocks[i]);
}

// ---- JSON -----------------------------------------------------------------------------------

Json string_array(const std::vector<std::string>& items, const Masker& mask) {
  Json array = Json::array();
  for (const auto& item : items) array.push_back(mask(item));
  return array;
}

Json init_json(const std::vector<InitStep>& steps, const Masker& mask) {
  Json array = Json::array();
  for (const auto& step : steps) {
    if (!step.if_not_exists.empty()) {
      array.push_back(Json::object(
          {{"if_not_exists", mask(step.if_not_exists)}, {"then", init_json(step.then, mask)}}));
    } else if (!step.append_path.empty()) {
      array.push_back(Json::object({{"append_file", Json::object({
                                                        {"path", mask(step.append_path)},
                                                        {"text", mask(step.append_text)},
                                                    })}}));
    } else {
      array.push_back(Json::object({{"run", string_array(step.run, mask)}}));
    }
  }
  return array;
}

Json health_json(const HealthCheck& health, const Masker& mask) {
  Json out = Json::object({{"kind", to_string(health.kind)}});
  if (health.kind == HealthCheck::Kind::none) return out;
  if (health.kind == HealthCheck::Kind::exec) {
    out.set("argv", string_array(health.argv, mask));
  } else {
    out.set("port_name", health.port_name);
    out.set("port", health.port);
  }
  if (health.kind == HealthCheck::Kind::http) {
    out.set("path", health.http_path);
    out.set("status", health.http_status);
  }
  out.set("interval_ms", health.interval.count());
  out.set("timeout_ms", health.timeout.count());
  out.set("retries", health.retries);
  out.set("start_period_ms", health.start_period.count());
  return out;
}

Json policy_json(const SandboxPolicy& policy, const Masker& mask) {
  std::vector<std::string> ro, rw;
  for (const auto& bind : policy.read_only) ro.push_back(bind.target());
  for (const auto& bind : policy.read_write) rw.push_back(bind.target());
  return Json::object({
      {"name", policy.name},
      {"network", to_string(policy.network)},
      {"identity", to_string(policy.identity)},
      {"working_dir", policy.working_dir},
      {"host_tmp_dir", policy.host_tmp_dir},
      {"system_view", policy.system_view},
      {"read_only", string_array(ro, mask)},
      {"read_write", string_array(rw, mask)},
      {"limits", Json::object({
                     {"memory", static_cast<std::int64_t>(policy.limits.memory_bytes)},
                     {"pids", policy.limits.pids},
                     {"cpu_millis", policy.limits.cpu_millis},
                     {"shm", static_cast<std::int64_t>(policy.limits.shm_bytes)},
                 })},
  });
}

Json block_json(const ResolvedBlock& block) {
  Masker mask{block};
  Json serves = Json::array();
  for (const auto& serve : block.serves)
    serves.push_back(Json::object({
        {"name", serve.name},
        {"type", serve.type},
        {"port", serve.port},
        {"host_port", serve.host_port ? serve.host_port : serve.port},
    }));
  Json consumes = Json::array();
  for (const auto& consume : block.consumes)
    consumes.push_back(Json::object({
        {"name", consume.name},
        {"provider", consume.provider},
        {"provider_port", consume.provider_port},
        {"host", "127.0.0.1"},
        {"local_port", consume.local_port},
    }));
  Json environment = Json::object();
  Json sources = Json::object();
  for (size_t i = 0; i < block.policy.environment.size(); ++i) {
    const auto& [name, value] = block.policy.environment[i];
    environment.set(name, mask.is_secret(name) ? std::string(kMask) : mask(value));
    if (i < block.environment_sources.size()) sources.set(name, block.environment_sources[i]);
  }
  Json programs = Json::object();
  for (const auto& [name, path] : block.programs) programs.set(name, path);
  return Json::object({
      {"name", block.name},
      {"sandbox_id", block.sandbox_id},
      {"first_party", block.first_party},
      {"definition", block.definition_file},
      {"sandboxed", block.sandboxed},
      {"command", string_array(block.command, mask)},
      {"serves", std::move(serves)},
      {"consumes", std::move(consumes)},
      {"depends_on", string_array(block.depends_on, mask)},
      {"health", health_json(block.health, mask)},
      {"restart", to_string(block.restart)},
      {"stop_signal", stop_signal_name(block.stop_signal)},
      {"stop_timeout_ms", block.stop_timeout.count()},
      {"init", init_json(block.init, mask)},
      {"environment", std::move(environment)},
      {"environment_sources", std::move(sources)},
      {"profiles", string_array(block.profiles, mask)},
      {"env_files", string_array(block.env_files, mask)},
      {"secret_environment", string_array(block.secret_names, mask)},
      {"programs", std::move(programs)},
      {"policy", policy_json(block.policy, mask)},
  });
}

void print_json(const ResolvedStack& stack) {
  Json blocks = Json::array();
  for (const auto& block : stack.blocks) blocks.push_back(block_json(block));
  Json skipped = Json::array();
  for (const auto& [name, profiles] : stack.skipped) {
    Json list = Json::array();
    for (const auto& profile : profiles) list.push_back(profile);
    skipped.push_back(Json::object({{"name", name}, {"profiles", std::move(list)}}));
  }
  std::fputs(to_json_line(Json::object({
                              {"v", 1},
                              {"stack", Json::object({
                                            {"name", stack.name},
                                            {"file", stack.file},
                                            {"storage_root", stack.storage_root},
                                        })},
                              {"blocks", std::move(blocks)},
                              {"not_started", std::move(skipped)},
                          }))
                 .c_str(),
             stdout);
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "stackie validate: %s\n(see 'stackie validate --help')\n", message.c_str());
  return kExitUsage;
}

}  // namespace

int run_validate(std::span<char*> argv) {
  LoadOptions options;
  bool json = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view arg = argv[i];
    if (arg == "-f" || arg == "--file") {
      if (i + 1 >= argv.size())
        return usage_error("option '" + std::string(arg) + "' needs a FILE");
      options.file = argv[++i];
    } else if (arg.rfind("--file=", 0) == 0) {
      options.file = std::string(arg.substr(7));
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--no-sandbox") {
      options.no_sandbox = true;
    } else if (arg == "--profile") {
      if (i + 1 >= argv.size()) return usage_error("option '--profile' needs a NAME");
      options.profiles.push_back(argv[++i]);
    } else if (arg.rfind("--profile=", 0) == 0) {
      options.profiles.push_back(std::string(arg.substr(10)));
    } else if (!arg.empty() && arg[0] != '-') {
      options.blocks.push_back(std::string(arg));
    } else {
      return usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  auto cwd = current_directory();
  if (!cwd.ok()) {
    std::fprintf(stderr, "stackie validate: %s\n", cwd.error().message.c_str());
    return kExitFailed;
  }
  options.cwd = *cwd;
  options.env = current_environment();
  Result<Settings> settings = load_user_settings(options.env);
  if (!settings.ok()) {
    std::fprintf(stderr, "%s\n", settings.error().message.c_str());
    return kExitFailed;
  }
  options.settings = std::move(settings).value();
  Result<ResolvedStack> stack = load_stack(options);
  if (!stack.ok()) {
    std::fprintf(stderr, "%s\n", stack.error().message.c_str());
    return kExitFailed;
  }
  for (const auto& warning : stack->warnings) std::fprintf(stderr, "%s\n", warning.c_str());
  if (json)
    print_json(*stack);
  else
    print_text(*stack);
  return kExitOk;
}

}  // namespace stackie::cli
