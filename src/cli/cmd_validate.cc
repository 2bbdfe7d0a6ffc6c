// `stackie validate [-f FILE] [--json] [--no-sandbox]`: loads and resolves a stack without a
// daemon and prints the result (stackie-validate in stackie(1); JSON shape in
// stackie-stack.yml(5)). Secret values are masked everywhere they appear.
#include <cjson/cJSON.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "cli/cli.h"
#include "cli/cmd.h"
#include "stack/block_def.h"
#include "stack/loader.h"

extern char** environ;

namespace stackie::cli {

extern const char kValidateUsage[] =
    "Usage: stackie validate [-f FILE] [--json] [--no-sandbox]\n"
    "\n"
    "Load and resolve a stack file without a daemon and print the result: blocks in start\n"
    "order, ports, environment after interpolation (secrets masked), and each block's sandbox\n"
    "policy. Without -f, looks for stackie-stack.yml, stackie-stack.yaml, stackie.yml,\n"
    "stackie.yaml in the current directory.\n"
    "\n"
    "Options:\n"
    "  -f, --file FILE  the stack file\n"
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
              std::string(to_string(block.restart)).c_str(), signal_name(block.stop_signal).c_str(),
              seconds(block.stop_timeout).c_str());
  if (!block.init.empty()) {
    std::printf("   init\n");
    print_init(block.init, mask, 5);
  }
  std::printf("   environment\n");
  for (const auto& [name, value] : block.policy.environment)
    std::printf("     %s=%s\n", name.c_str(), mask.is_secret(name) ? kMask : mask(value).c_str());
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
}

void print_text(const ResolvedStack& stack) {
  std::printf("stack %s (%s)\n", stack.name.c_str(), stack.file.c_str());
  std::printf("storage %s\n", stack.storage_root.c_str());
  std::printf("start order:");
  for (const auto& block : stack.blocks) std::printf(" %s", block.name.c_str());
  std::printf("\n");
  for (size_t i = 0; i < stack.blocks.size(); ++i) print_block(i, stack.blocks[i]);
}

// ---- JSON -----------------------------------------------------------------------------------

struct JsonDeleter {
  void operator()(cJSON* json) const { cJSON_Delete(json); }
};

cJSON* string_array(const std::vector<std::string>& items, const Masker& mask) {
  cJSON* array = cJSON_CreateArray();
  for (const auto& item : items)
    cJSON_AddItemToArray(array, cJSON_CreateString(mask(item).c_str()));
  return array;
}

cJSON* init_json(const std::vector<InitStep>& steps, const Masker& mask) {
  cJSON* array = cJSON_CreateArray();
  for (const auto& step : steps) {
    cJSON* item = cJSON_CreateObject();
    if (!step.if_not_exists.empty()) {
      cJSON_AddStringToObject(item, "if_not_exists", mask(step.if_not_exists).c_str());
      cJSON_AddItemToObject(item, "then", init_json(step.then, mask));
    } else if (!step.append_path.empty()) {
      cJSON* append = cJSON_AddObjectToObject(item, "append_file");
      cJSON_AddStringToObject(append, "path", mask(step.append_path).c_str());
      cJSON_AddStringToObject(append, "text", mask(step.append_text).c_str());
    } else {
      cJSON_AddItemToObject(item, "run", string_array(step.run, mask));
    }
    cJSON_AddItemToArray(array, item);
  }
  return array;
}

cJSON* block_json(const ResolvedBlock& block) {
  Masker mask{block};
  cJSON* out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "name", block.name.c_str());
  cJSON_AddStringToObject(out, "sandbox_id", block.sandbox_id.c_str());
  cJSON_AddBoolToObject(out, "first_party", block.first_party);
  cJSON_AddStringToObject(out, "definition", block.definition_file.c_str());
  cJSON_AddBoolToObject(out, "sandboxed", block.sandboxed);
  cJSON_AddItemToObject(out, "command", string_array(block.command, mask));
  cJSON* serves = cJSON_AddArrayToObject(out, "serves");
  for (const auto& serve : block.serves) {
    cJSON* item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "name", serve.name.c_str());
    cJSON_AddStringToObject(item, "type", serve.type.c_str());
    cJSON_AddNumberToObject(item, "port", serve.port);
    cJSON_AddNumberToObject(item, "host_port", serve.host_port ? serve.host_port : serve.port);
    cJSON_AddItemToArray(serves, item);
  }
  cJSON* consumes = cJSON_AddArrayToObject(out, "consumes");
  for (const auto& consume : block.consumes) {
    cJSON* item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "name", consume.name.c_str());
    cJSON_AddStringToObject(item, "provider", consume.provider.c_str());
    cJSON_AddStringToObject(item, "provider_port", consume.provider_port.c_str());
    cJSON_AddStringToObject(item, "host", "127.0.0.1");
    cJSON_AddNumberToObject(item, "local_port", consume.local_port);
    cJSON_AddItemToArray(consumes, item);
  }
  cJSON_AddItemToObject(out, "depends_on", string_array(block.depends_on, mask));
  cJSON* health = cJSON_AddObjectToObject(out, "health");
  cJSON_AddStringToObject(health, "kind", std::string(to_string(block.health.kind)).c_str());
  if (block.health.kind != HealthCheck::Kind::none) {
    if (block.health.kind == HealthCheck::Kind::exec)
      cJSON_AddItemToObject(health, "argv", string_array(block.health.argv, mask));
    else {
      cJSON_AddStringToObject(health, "port_name", block.health.port_name.c_str());
      cJSON_AddNumberToObject(health, "port", block.health.port);
    }
    if (block.health.kind == HealthCheck::Kind::http) {
      cJSON_AddStringToObject(health, "path", block.health.http_path.c_str());
      cJSON_AddNumberToObject(health, "status", block.health.http_status);
    }
    cJSON_AddNumberToObject(health, "interval_ms",
                            static_cast<double>(block.health.interval.count()));
    cJSON_AddNumberToObject(health, "timeout_ms",
                            static_cast<double>(block.health.timeout.count()));
    cJSON_AddNumberToObject(health, "retries", block.health.retries);
    cJSON_AddNumberToObject(health, "start_period_ms",
                            static_cast<double>(block.health.start_period.count()));
  }
  cJSON_AddStringToObject(out, "restart", std::string(to_string(block.restart)).c_str());
  cJSON_AddStringToObject(out, "stop_signal", signal_name(block.stop_signal).c_str());
  cJSON_AddNumberToObject(out, "stop_timeout_ms", static_cast<double>(block.stop_timeout.count()));
  cJSON_AddItemToObject(out, "init", init_json(block.init, mask));
  cJSON* env = cJSON_AddObjectToObject(out, "environment");
  for (const auto& [name, value] : block.policy.environment)
    cJSON_AddStringToObject(env, name.c_str(), mask.is_secret(name) ? kMask : mask(value).c_str());
  cJSON_AddItemToObject(out, "secret_environment", string_array(block.secret_names, mask));
  cJSON* programs = cJSON_AddObjectToObject(out, "programs");
  for (const auto& [name, path] : block.programs)
    cJSON_AddStringToObject(programs, name.c_str(), path.c_str());
  const SandboxPolicy& policy = block.policy;
  cJSON* sandbox = cJSON_AddObjectToObject(out, "policy");
  cJSON_AddStringToObject(sandbox, "name", policy.name.c_str());
  cJSON_AddStringToObject(sandbox, "network", to_string(policy.network).data());
  cJSON_AddStringToObject(sandbox, "identity", to_string(policy.identity).data());
  cJSON_AddStringToObject(sandbox, "working_dir", policy.working_dir.c_str());
  cJSON_AddStringToObject(sandbox, "host_tmp_dir", policy.host_tmp_dir.c_str());
  cJSON_AddBoolToObject(sandbox, "system_view", policy.system_view);
  std::vector<std::string> ro, rw;
  for (const auto& bind : policy.read_only) ro.push_back(bind.target());
  for (const auto& bind : policy.read_write) rw.push_back(bind.target());
  cJSON_AddItemToObject(sandbox, "read_only", string_array(ro, mask));
  cJSON_AddItemToObject(sandbox, "read_write", string_array(rw, mask));
  return out;
}

void print_json(const ResolvedStack& stack) {
  std::unique_ptr<cJSON, JsonDeleter> root(cJSON_CreateObject());
  cJSON_AddNumberToObject(root.get(), "v", 1);
  cJSON* header = cJSON_AddObjectToObject(root.get(), "stack");
  cJSON_AddStringToObject(header, "name", stack.name.c_str());
  cJSON_AddStringToObject(header, "file", stack.file.c_str());
  cJSON_AddStringToObject(header, "storage_root", stack.storage_root.c_str());
  cJSON* blocks = cJSON_AddArrayToObject(root.get(), "blocks");
  for (const auto& block : stack.blocks) cJSON_AddItemToArray(blocks, block_json(block));
  char* text = cJSON_Print(root.get());
  std::printf("%s\n", text);
  cJSON_free(text);
}

Environment process_environment() {
  Environment env;
  for (char** entry = environ; entry && *entry; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals) env[std::string(*entry, static_cast<size_t>(equals - *entry))] = equals + 1;
  }
  return env;
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
    } else {
      return usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  char cwd[PATH_MAX];
  if (!::getcwd(cwd, sizeof cwd)) {
    std::fprintf(stderr, "stackie validate: cannot get the current directory: %s\n",
                 std::strerror(errno));
    return kExitFailed;
  }
  options.cwd = cwd;
  options.env = process_environment();
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
