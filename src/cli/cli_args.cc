#include "cli/cli_args.h"

#include <unistd.h>

#include <climits>
#include <cstdio>

#include "base/fs_path.h"
#include "stack/stack_file.h"

namespace stackie::cli {

std::optional<std::string> ArgWalker::value(std::string_view short_name,
                                            std::string_view long_name) {
  std::string_view arg = current();
  for (std::string_view name : {short_name, long_name}) {
    if (name.empty()) continue;
    if (arg == name) {
      if (index_ + 1 >= argv_.size()) {
        error = "option " + std::string(name) + " needs a value";
        ++index_;
        return std::string();
      }
      index_ += 2;
      return std::string(argv_[index_ - 1]);
    }
    if (name.size() > 2 && arg.size() > name.size() && arg.substr(0, name.size()) == name &&
        arg[name.size()] == '=') {
      ++index_;
      return std::string(arg.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

bool ArgWalker::flag(std::string_view short_name, std::string_view long_name) {
  std::string_view arg = current();
  if ((!short_name.empty() && arg == short_name) || (!long_name.empty() && arg == long_name)) {
    ++index_;
    return true;
  }
  return false;
}

bool take_stack_target(ArgWalker& args, StackTarget& target) {
  if (auto v = args.value("-f", "--file")) {
    target.file = *v;
  } else if (args.current().starts_with("-")) {
    return false;
  } else if (target.stack.empty()) {
    target.stack = args.current();
    args.next();
  } else {
    args.error = "one STACK at most";
  }
  if (args.error.empty() && !target.file.empty() && !target.stack.empty())
    args.error = "-f and STACK exclude each other";
  return true;
}

std::optional<Json> stack_target_params(const StackTarget& target, bool cwd_default,
                                        std::string& error) {
  Json params = Json::object();
  if (!target.stack.empty()) {
    params.set("stack", target.stack);
  } else if (!target.file.empty() || cwd_default) {
    auto path = absolute_stack_file(target.file, error);
    if (!path) return std::nullopt;
    params.set("file", *path);
  }
  return params;
}

std::optional<std::string> absolute_stack_file(const std::string& file, std::string& error) {
  auto cwd = current_directory();
  if (!cwd.ok()) {
    error = cwd.error().message;
    return std::nullopt;
  }
  auto found = find_stack_file(file, *cwd);
  if (!found.ok()) {
    error = found.error().message;
    return std::nullopt;
  }
  std::string path = *found;
  if (!path.empty() && !is_host_absolute_path(path)) path = *cwd + "/" + path;
  return path;
}

std::string format_ports(const Json& ports) {
  std::string out;
  if (!ports.is_array()) return out;
  for (const auto& port : ports.as_array()) {
    if (!out.empty()) out += ",";
    out += port["host"].string_or("?") + "->" + std::to_string(port["sandbox"].int_or(0));
    // Not the host port the stack asked for (it was taken): `ps` says so.
    if (port["wanted"].is_int())
      out += " (moved from " + std::to_string(port["wanted"].as_int()) + ")";
  }
  return out;
}

std::string format_uptime(const Json& uptime_s) {
  if (!uptime_s.is_int()) return "-";
  long long s = uptime_s.as_int();
  char buffer[32];
  if (s < 60)
    std::snprintf(buffer, sizeof buffer, "%llds", s);
  else if (s < 3600)
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", s / 60, s % 60);
  else if (s < 86400)
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%lldd%02lldh", s / 86400, s / 3600 % 24);
  return buffer;
}

void print_json(const Json& value) {
  std::string text = to_json_line(value);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0 || value >= 10)
    std::snprintf(text, sizeof text, "%.0f %s", value, units[unit]);
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

bool confirm(const std::string& question) {
  if (!::isatty(STDIN_FILENO)) {
    std::fprintf(stderr, "stackie: %s Not asked without a terminal: add --yes\n", question.c_str());
    return false;
  }
  std::fprintf(stderr, "%s [y/N] ", question.c_str());
  std::fflush(stderr);
  char answer[16] = {};
  if (std::fgets(answer, sizeof answer, stdin) == nullptr) return false;
  std::string text(answer);
  return text == "y\n" || text == "Y\n" || text == "yes\n";
}

}  // namespace stackie::cli
