// StackFile -> stackie-stack.yml text (`stackie convert`): every field the stack file parser
// reads, each string double-quoted so no value changes type (`no`, `8080`) on the way back in.
#include "stack/stack_writer.h"

#include <cstdio>

namespace stackie {

namespace {

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string duration(long long ms) {
  if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string flow_list(const std::vector<YamlNode>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quote(items[i].text);
  return out + "]";
}

class Writer {
 public:
  std::string text;

  void line(int indent, const std::string& content) {
    text += std::string(static_cast<size_t>(indent) * 2, ' ') + content + "\n";
  }

  void block(const StackBlockDecl& decl) {
    line(2, decl.name + ":");
    if (decl.catalog) line(3, "catalog: " + decl.catalog->text);
    if (!decl.vars.empty()) {
      line(3, "vars:");
      for (const auto& [name, value] : decl.vars) line(4, name + ": " + quote(value.text));
    }
    if (decl.path) line(3, "path: " + quote(decl.path->text));
    if (decl.command.present) {
      if (decl.command.shell)
        line(3, "command: " + quote(decl.command.argv[2].text));
      else
        line(3, "command: " + flow_list(decl.command.argv));
    }
    if (decl.network) line(3, "network: " + decl.network->text);
    if (!decl.serves.empty()) {
      line(3, "serves:");
      for (const auto& serve : decl.serves) {
        std::string fields;
        if (serve.port) fields += "port: " + std::to_string(serve.port);
        if (serve.host_port)
          fields += (fields.empty() ? "" : ", ") + std::string("host_port: ") +
                    std::to_string(serve.host_port);
        line(4, serve.name + ": {" + fields + "}");
      }
    }
    if (!decl.consumes.empty()) {
      line(3, "consumes:");
      for (const auto& consume : decl.consumes)
        line(4, consume.name + ": {port_type: " + consume.port_type +
                    ", block_override: " + consume.block + "}");
    }
    if (!decl.depends_on.empty()) {
      line(3, "depends_on:");
      for (const auto& [name, where] : decl.depends_on) {
        std::string condition;
        for (const auto& [dependency, kind] : decl.depend_conditions)
          if (dependency == name) condition = std::string(to_string(kind));
        line(4, name + ":" + (condition.empty() ? "" : " {condition: " + condition + "}"));
      }
    }
    if (!decl.environment.empty()) {
      line(3, "environment:");
      for (const auto& [name, value] : decl.environment) line(4, name + ": " + quote(value.text));
    }
    if (!decl.env_files.empty()) {
      line(3, "env_file:");
      for (const auto& file : decl.env_files)
        line(4, file.required ? "- " + quote(file.path.text)
                              : "- {path: " + quote(file.path.text) + ", required: false}");
    }
    if (!decl.profiles.empty()) line(3, "profiles: " + flow_list(decl.profiles));
    if (!decl.secrets.empty()) line(3, "secrets: " + flow_list(decl.secrets));
    if (!decl.volumes.empty()) {
      line(3, "volumes:");
      for (const auto& volume : decl.volumes) {
        if (!volume.host_path)
          line(4, volume.name + ":");
        else if (volume.read_only)
          line(4, volume.name + ": {host: " + quote(volume.host_path->text) + ", read_only: true}");
        else
          line(4, volume.name + ": " + quote(volume.host_path->text));
      }
    }
    if (decl.restart) line(3, "restart: " + quote(std::string(to_string(*decl.restart))));
    if (decl.health) health(*decl.health);
    if (decl.stop_signal) line(3, "stop_signal: " + stop_signal_name(*decl.stop_signal));
    if (decl.stop_timeout_ms) line(3, "stop_timeout: " + duration(*decl.stop_timeout_ms));
  }

  void health(const HealthDecl& health) {
    if (health.kind == HealthCheck::Kind::none) {
      line(3, "health: none");
      return;
    }
    line(3, "health:");
    if (health.kind == HealthCheck::Kind::exec) line(4, "exec: " + flow_list(health.exec));
    if (health.kind == HealthCheck::Kind::tcp) line(4, "tcp: " + health.port_name);
    line(4, "interval: " + duration(health.interval_ms));
    line(4, "timeout: " + duration(health.timeout_ms));
    line(4, "retries: " + std::to_string(health.retries));
    line(4, "start_period: " + duration(health.start_period_ms));
  }
};

}  // namespace

std::string write_stack_file(const StackFile& stack, const std::vector<std::string>& header) {
  Writer writer;
  for (const auto& note : header) writer.text += note.empty() ? "#\n" : "# " + note + "\n";
  writer.line(0, stack.name + ":");
  if (stack.strict_ports) writer.line(1, "ports: strict");
  writer.line(1, "blocks:");
  for (const auto& decl : stack.blocks) writer.block(decl);
  return writer.text;
}

}  // namespace stackie
