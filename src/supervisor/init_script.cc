#include "supervisor/init_script.h"

namespace stackie {

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  out += '\'';
  return out;
}

namespace {

void emit_steps(const std::vector<InitStep>& steps, int depth, std::string& out) {
  std::string indent(static_cast<size_t>(depth) * 2, ' ');
  for (const auto& step : steps) {
    if (!step.if_not_exists.empty()) {
      out += indent + "if [ ! -e " + shell_quote(step.if_not_exists) + " ]; then\n";
      out +=
          indent + "  echo " + shell_quote("[init] " + step.if_not_exists + " is missing") + "\n";
      emit_steps(step.then, depth + 1, out);
      out += indent + "  :\n" + indent + "fi\n";
    } else if (!step.run.empty()) {
      std::string command;
      for (const auto& arg : step.run) command += (command.empty() ? "" : " ") + shell_quote(arg);
      out += indent + "echo " + shell_quote("[init] run: " + command) + "\n";
      out += indent + command + "\n";
    } else if (!step.append_path.empty()) {
      out += indent + "printf '%s' " + shell_quote(step.append_text) + " >> " +
             shell_quote(step.append_path) + "\n";
    }
  }
}

}  // namespace

std::string init_script(const std::vector<InitStep>& steps) {
  if (steps.empty()) return {};
  std::string out = "set -e\n";
  emit_steps(steps, 0, out);
  return out;
}

std::vector<std::string> init_argv(const std::vector<InitStep>& steps) {
  std::string script = init_script(steps);
  if (script.empty()) return {};
  return {"/bin/sh", "-c", script, "stackie-init"};
}

}  // namespace stackie
