#include "cli/service_units.h"

namespace stackie {

namespace {

// systemd expands %-specifiers in nearly every setting (systemd.unit(5) "Specifiers").
std::string escape_specifiers(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '%') out += '%';
    out += c;
  }
  return out;
}

// One word of a systemd command line (systemd.service(5) "Command lines"): '$' would start a
// variable expansion, and whitespace, quotes, backslashes or ';' need double quotes.
std::string systemd_exec_word(const std::string& word) {
  std::string escaped;
  bool quote = word.empty();
  for (char c : escape_specifiers(word)) {
    if (c == '$') escaped += '$';
    if (c == '\\' || c == '"') {
      escaped += '\\';
      quote = true;
    }
    if (c == ' ' || c == '\t' || c == '\'' || c == ';') quote = true;
    escaped += c;
  }
  return quote ? "\"" + escaped + "\"" : escaped;
}

std::string systemd_quoted_assignment(const std::string& name, const std::string& value) {
  std::string out = "\"" + name + "=";
  for (char c : escape_specifiers(value)) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string xml_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string env_value(const Environment& env, const char* name) {
  auto found = env.find(name);
  return found == env.end() ? "" : found->second;
}

// A unit file is line-based: a newline in a path would start a new setting.
Status check_spec(const ServiceSpec& spec) {
  for (const std::string* field : {&spec.daemon_program, &spec.stackie_home, &spec.socket_path,
                                   &spec.runtime_dir, &spec.log_path}) {
    if (field->find_first_of("\n\r") != std::string::npos)
      return Error{0, "a path for the service contains a newline: '" + *field + "'"};
  }
  if (spec.daemon_program.empty() || spec.daemon_program[0] != '/')
    return Error{0,
                 "the daemon program must be an absolute path, got '" + spec.daemon_program + "'"};
  return {};
}

// A socket the service manager makes: absolute, and not the root directory's own entry.
Status check_socket_path(const ServiceSpec& spec) {
  if (spec.socket_path.size() < 2 || spec.socket_path[0] != '/' || spec.socket_path.back() == '/')
    return Error{0, "the daemon socket must be an absolute path, got '" + spec.socket_path + "'"};
  return {};
}

}  // namespace

std::string systemd_service_unit(const ServiceSpec& spec) {
  std::string unit =
      R"(# stackied as a systemd user service; see stackied(8). 'stackie daemon install' writes
# this file, 'stackie daemon uninstall' removes it.
[Unit]
Description=Stackie daemon (sandboxed development services)
Documentation=man:stackied(8) man:stackie(1)

[Service]
Type=notify
)";
  unit += "ExecStart=" + systemd_exec_word(spec.daemon_program) + " --foreground\n";
  if (!spec.stackie_home.empty())
    unit += "Environment=" + systemd_quoted_assignment("STACKIE_HOME", spec.stackie_home) + "\n";
  // Restart=on-failure: `stackie daemon stop` exits 0 and must stay stopped.
  unit += R"(Restart=on-failure
# stackied stops the blocks itself, in reverse dependency order, each with its own stop
# signal and timeout: only the daemon gets SIGTERM; what is left gets SIGKILL after it.
KillMode=mixed
TimeoutStopSec=120
# The daemon gets a cgroup subtree of its own (pids, memory, cpu controllers) and makes one
# cgroup per block in it, holding the block's limits (stackie-stack.yml(5) limits).
Delegate=yes

[Install]
WantedBy=default.target
)";
  return unit;
}

std::string systemd_socket_unit(const ServiceSpec& spec) {
  std::string listen = spec.socket_path;
  const std::string& runtime = spec.runtime_dir;
  bool below_runtime = !runtime.empty() && listen.size() > runtime.size() + 1 &&
                       listen.compare(0, runtime.size(), runtime) == 0 &&
                       listen[runtime.size()] == '/';
  if (listen.empty())
    listen = "%t/stackie/stackied.sock";  // the daemon's default where XDG_RUNTIME_DIR is set
  else if (below_runtime)
    listen = "%t" + escape_specifiers(listen.substr(runtime.size()));
  else
    listen = escape_specifiers(listen);
  return R"(# The socket of stackied, opened by systemd: the daemon starts on the first connection.
# See stackied(8). Written by 'stackie daemon install --socket-activation'.
[Unit]
Description=Stackie daemon socket
Documentation=man:stackied(8)

[Socket]
ListenStream=)" +
         listen + R"(
SocketMode=0600
DirectoryMode=0700

[Install]
WantedBy=sockets.target
)";
}

std::string launchd_plist(const ServiceSpec& spec, bool socket_activation) {
  std::string plist = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- stackied as a LaunchAgent; see stackied(8). -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>)" + xml_text(kLaunchdLabel) +
                      R"(</string>
	<key>ProgramArguments</key>
	<array>
		<string>)" +
                      xml_text(spec.daemon_program) +
                      R"(</string>
		<string>--foreground</string>
	</array>
)";
  if (!spec.stackie_home.empty())
    plist +=
        "\t<key>EnvironmentVariables</key>\n\t<dict>\n\t\t<key>STACKIE_HOME</key>\n\t\t<string>" +
        xml_text(spec.stackie_home) + "</string>\n\t</dict>\n";
  if (socket_activation) {
    // launchd binds and listens on the daemon's socket from the moment the agent is loaded and
    // starts stackied on the first connection; stackied takes the socket with
    // launch_activate_socket("Listeners") (supervisor/launchd_activation.h). No RunAtLoad: the
    // daemon starts on demand, as with systemd's socket unit. SockPathMode is decimal (plists
    // have no octal): 384 = 0600, the mode stackied gives its own socket.
    plist += R"(	<key>Sockets</key>
	<dict>
		<key>Listeners</key>
		<dict>
			<key>SockPathName</key>
			<string>)" +
             xml_text(spec.socket_path) +
             R"(</string>
			<key>SockPathMode</key>
			<integer>384</integer>
		</dict>
	</dict>
)";
  } else {
    plist += "\t<key>RunAtLoad</key>\n\t<true/>\n";
  }
  // KeepAlive unless SuccessfulExit: restarted after a crash, not after `stackie daemon stop`
  // (with a Sockets entry, the next connection starts it again).
  // ExitTimeOut: stopping every stack gracefully takes each block's stop timeout, and launchd's
  // default before SIGKILL is 20 s.
  plist += R"(	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ExitTimeOut</key>
	<integer>120</integer>
)";
  if (!spec.log_path.empty())
    for (const char* key : {"StandardOutPath", "StandardErrorPath"})
      plist += std::string("\t<key>") + key + "</key>\n\t<string>" + xml_text(spec.log_path) +
               "</string>\n";
  plist += "</dict>\n</plist>\n";
  return plist;
}

Result<std::string> systemd_user_unit_dir(const Environment& env) {
  std::string config = env_value(env, "XDG_CONFIG_HOME");
  // The XDG base directory spec: a relative value is invalid and must be ignored.
  if (config.empty() || config[0] != '/') {
    std::string home = env_value(env, "HOME");
    if (home.empty() || home[0] != '/')
      return Error{0, "neither XDG_CONFIG_HOME nor an absolute HOME is set"};
    config = join_path(home, ".config");
  }
  return join_path(normalize_path(config), "systemd/user");
}

Result<std::string> launch_agents_dir(const Environment& env) {
  std::string home = env_value(env, "HOME");
  if (home.empty() || home[0] != '/') return Error{0, "HOME is not set to an absolute path"};
  return join_path(normalize_path(home), "Library/LaunchAgents");
}

Result<ServiceInstallPlan> plan_service_install(const std::string& os, const ServiceSpec& spec,
                                                const Environment& env, bool socket_activation) {
  STACKIE_TRY(check_spec(spec));
  ServiceInstallPlan plan;
  if (os == "linux") {
    STACKIE_TRY_ASSIGN(dir, systemd_user_unit_dir(env));
    plan.files.push_back({join_path(dir, kSystemdServiceName), systemd_service_unit(spec)});
    std::string unit = kSystemdServiceName;
    if (socket_activation) {
      STACKIE_TRY(check_socket_path(spec));
      plan.files.push_back({join_path(dir, kSystemdSocketName), systemd_socket_unit(spec)});
      unit = kSystemdSocketName;
    }
    plan.enable_commands = {"systemctl --user daemon-reload && systemctl --user enable --now " +
                            unit};
    return plan;
  }
  if (os == "macos") {
    STACKIE_TRY_ASSIGN(dir, launch_agents_dir(env));
    if (socket_activation) {
      STACKIE_TRY(check_socket_path(spec));
      // launchd binds the socket but does not make its directory; stackied makes it 0700 when
      // it binds itself, and so does install here.
      size_t slash = spec.socket_path.rfind('/');
      if (slash > 0) plan.directories.push_back(spec.socket_path.substr(0, slash));
    }
    std::string path = join_path(dir, std::string(kLaunchdLabel) + ".plist");
    plan.files.push_back({path, launchd_plist(spec, socket_activation)});
    plan.enable_commands = {"launchctl bootstrap gui/$(id -u) " + path};
    return plan;
  }
  return Error{0,
               "running stackied as a service is supported on Linux (systemd) and macOS "
               "(launchd), not on " +
                   os};
}

Result<ServiceUninstallPlan> plan_service_uninstall(const std::string& os, const Environment& env) {
  ServiceUninstallPlan plan;
  if (os == "linux") {
    STACKIE_TRY_ASSIGN(dir, systemd_user_unit_dir(env));
    plan.files = {join_path(dir, kSystemdServiceName), join_path(dir, kSystemdSocketName)};
    // What `systemctl --user enable` made for the [Install] sections above.
    plan.enable_links = {join_path(dir, std::string("default.target.wants/") + kSystemdServiceName),
                         join_path(dir, std::string("sockets.target.wants/") + kSystemdSocketName)};
    plan.disable_commands = {"systemctl --user stop stackied.socket stackied.service",
                             "systemctl --user daemon-reload"};
    return plan;
  }
  if (os == "macos") {
    STACKIE_TRY_ASSIGN(dir, launch_agents_dir(env));
    plan.files = {join_path(dir, std::string(kLaunchdLabel) + ".plist")};
    plan.disable_commands = {"launchctl bootout gui/$(id -u)/" + std::string(kLaunchdLabel)};
    return plan;
  }
  return Error{0,
               "running stackied as a service is supported on Linux (systemd) and macOS "
               "(launchd), not on " +
                   os};
}

}  // namespace stackie
