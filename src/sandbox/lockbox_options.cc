#include "sandbox/lockbox_options.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "base/fs_path.h"
#include "policy/resource_limits.h"

namespace stackie::lockbox {

const char kUsage[] =
    "Usage: stackie-lockbox [OPTIONS] -- COMMAND [ARG...]\n"
    "       stackie-lockbox --join PID [--setenv NAME VALUE | --pass-env NAME]... [--chdir DIR]\n"
    "                       [--name NAME] -- COMMAND [ARG...]\n"
    "\n"
    "Run COMMAND inside an unprivileged namespace sandbox built from a policy.\n"
    "\n"
    "Policy:\n"
    "  --ro SRC[:DEST]          bind SRC read-only (at DEST, default SRC)\n"
    "  --rw SRC[:DEST]          bind SRC read-write\n"
    "  --tmpfs DEST             mount a fresh tmpfs at DEST\n"
    "  --tmpdir DIR             back the private /tmp with host directory DIR\n"
    "  --storage-root DIR       open bind sources and --tmpdir below DIR from DIR, refusing\n"
    "                           any symlink on the way (a block may have planted one)\n"
    "  --link-free-root DIR     the same for another directory a block can write (a project);\n"
    "                           repeatable\n"
    "  --net none|localhost|host  network namespace mode (default none)\n"
    "  --identity root|user     uid inside: 0 (default) or the caller's own\n"
    "  --setenv NAME VALUE      add a variable; nothing else of the environment passes\n"
    "  --pass-env NAME          add NAME with its value from this environment (if set), so a\n"
    "                           secret value need not appear on the command line\n"
    "  --chdir DIR              working directory inside (default /)\n"
    "  --name NAME              sandbox name, the hostname inside (default stackie); with\n"
    "                           --join, the name the joined sandbox must have\n"
    "  --pass-fd N              keep fd N open in COMMAND\n"
    "  --no-system-view         do not add the default read-only system view\n"
    "  --memory SIZE            memory limit (512MiB, 2GiB...; RLIMIT_DATA per process\n"
    "                           without --cgroup-fd); also the size of a fresh /tmp\n"
    "  --pids N                 at most N processes in the sandbox (RLIMIT_NPROC, counted\n"
    "                           in the sandbox's own user namespace)\n"
    "  --shm SIZE               size of /dev/shm (default: --memory, at most 64MiB)\n"
    "  --cpus N                 Windows: a hard cap of N CPUs (1.5, 0.25...) on COMMAND's job\n"
    "  --allow-bind PORT        the landlock backend and macOS: the block may bind TCP PORT of\n"
    "                           the host (with --net localhost; every other port stays closed)\n"
    "  --allow-connect PORT     the landlock backend and macOS: the block may connect to TCP\n"
    "                           PORT of the host\n"
    "  --policy-fd N            read the policy as JSON from fd N (instead of the flags above)\n"
    "\n"
    "Other:\n"
    "  --backend auto|namespaces|landlock\n"
    "                           the sandbox: namespaces (the full lockbox), landlock (for hosts\n"
    "                           that deny user namespaces; weaker, see BACKENDS), or auto\n"
    "                           (default: namespaces when this host allows them)\n"
    "  --print-backend          print the backend auto would choose, and why, then exit\n"
    "  --zygote                 Linux, the daemon's: fork a lockbox per spawn request on\n"
    "                           the socket at fd 3, until it closes (stackie-lockbox(1))\n"
    "  --error-fd N             report a setup failure as one JSON line on fd N\n"
    "  --cgroup-fd N            join the cgroup v2 directory N (limited by the caller)\n"
    "                           before creating the namespaces; no rlimits then\n"
    "  --net-fd N               make sockets inside the network namespace on request\n"
    "                           over the SOCK_SEQPACKET socket N (see stackie-lockbox(1))\n"
    "  --listen PORT            listen on 127.0.0.1:PORT inside, before COMMAND starts,\n"
    "                           and send the listener on the --net-fd socket\n"
    "  --lifeline-fd N          macOS: kill every process of the block when fd N reads\n"
    "                           a byte or end of file (the daemon holds the other end)\n"
    "  --join PID               Linux: run COMMAND inside the running sandbox of PID\n"
    "  --exit-with PID          Windows: end COMMAND and everything it started when process\n"
    "                           PID exits (the block's monitor: what `exec` runs dies with it)\n"
    "  --stop-fd N              Windows: a byte 's' on fd N asks COMMAND to stop (CTRL_BREAK\n"
    "                           to its process group; its job is ended if that cannot be\n"
    "                           delivered), 'k' ends its job at once (the daemon's stop)\n"
    "  --print-policy           print the policy as JSON and exit\n"
    "  -h, --help               show this help\n"
    "  -V, --version            print version, commit and sandbox backend\n"
    "\n"
    "Exit status: COMMAND's (128+N for signal N), 125 setup failure, 126 not executable,\n"
    "127 not found.\n";

namespace {

Error usage_error(std::string message) {
  return Error{0, std::move(message)};
}

Result<int> parse_int(std::string_view option, std::string_view text, int min) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min)
    return usage_error(std::string(option) + ": '" + std::string(text) +
                       "' is not a number >= " + std::to_string(min));
  return value;
}

// SRC[:DEST]. A ':' in SRC cannot be written here (the policy fd takes any path), except the
// drive of a Windows path: "C:/src" and "C:\\src" are a SRC.
Result<BindMount> parse_bind(std::string_view option, std::string_view text) {
  BindMount bind;
  const bool drive = is_absolute_path(std::string(text.substr(0, 3))) && text.size() > 2 &&
                     has_drive_prefix(std::string(text.substr(0, 2)));
  size_t colon = text.find(':', drive ? 2 : 0);
  bind.source = std::string(text.substr(0, colon));
  if (colon != std::string_view::npos) {
    bind.dest = std::string(text.substr(colon + 1));
    if (bind.dest.empty())
      return usage_error(std::string(option) + ": empty DEST in '" + std::string(text) + "'");
  }
  if (!is_absolute_path(bind.source))
    return usage_error(std::string(option) + ": SRC '" + bind.source + "' must be absolute");
  if (!bind.dest.empty() && !is_absolute_path(bind.dest))
    return usage_error(std::string(option) + ": DEST '" + bind.dest + "' must be absolute");
  if (bind.dest == bind.source) bind.dest.clear();
  return bind;
}

}  // namespace

Result<Options> parse_options(int argc, const char* const* argv) {
  Options options;
  SandboxPolicy& policy = options.policy;
  int i = 1;
  // The value of an option that takes one; an error names the option.
  auto value = [&](std::string_view option) -> Result<std::string_view> {
    if (i + 1 >= argc) return usage_error(std::string(option) + " needs a value");
    return std::string_view(argv[++i]);
  };
  bool saw_separator = false;
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") {
      saw_separator = true;
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      return options;
    }
    if (arg == "-V" || arg == "--version") {
      options.version = true;
      return options;
    }
    if (arg == "--print-policy") {
      options.print_policy = true;
      continue;
    }
    if (arg == "--print-backend") {
      options.print_backend = true;
      continue;
    }
    if (arg == "--no-system-view") {
      policy.system_view = false;
      options.policy_flags_used = true;
      continue;
    }
    if (arg == "--ro" || arg == "--rw") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(bind, parse_bind(arg, text));
      (arg == "--ro" ? policy.read_only : policy.read_write).push_back(std::move(bind));
      options.policy_flags_used = true;
    } else if (arg == "--tmpfs") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      policy.tmpfs.emplace_back(text);
      options.policy_flags_used = true;
    } else if (arg == "--tmpdir") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      policy.host_tmp_dir = std::string(text);
      options.policy_flags_used = true;
    } else if (arg == "--storage-root") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      policy.storage_root = std::string(text);
      options.policy_flags_used = true;
    } else if (arg == "--link-free-root") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      policy.link_free_roots.emplace_back(text);
      options.policy_flags_used = true;
    } else if (arg == "--net") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(mode, parse_network_mode(text));
      policy.network = mode;
      options.policy_flags_used = true;
    } else if (arg == "--identity") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(identity, parse_identity(text));
      policy.identity = identity;
      options.policy_flags_used = true;
    } else if (arg == "--setenv") {
      STACKIE_TRY_ASSIGN(name, value(arg));
      if (i + 1 >= argc) return usage_error("--setenv " + std::string(name) + " needs a VALUE");
      policy.environment.emplace_back(std::string(name), std::string(argv[++i]));
      options.policy_flags_used = true;
    } else if (arg == "--pass-env") {
      // The value never appears in argv (which every user can read in /proc/PID/cmdline);
      // only the caller's own environment, readable by the same uid alone, carries it.
      STACKIE_TRY_ASSIGN(name, value(arg));
      std::string key(name);
      if (const char* from_caller = ::getenv(key.c_str()))
        policy.environment.emplace_back(std::move(key), std::string(from_caller));
      options.policy_flags_used = true;
    } else if (arg == "--chdir") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      policy.working_dir = std::string(text);
      options.policy_flags_used = true;
    } else if (arg == "--name") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      policy.name = std::string(text);
      options.policy_flags_used = true;
    } else if (arg == "--pass-fd") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(fd, parse_int(arg, text, 3));
      policy.pass_fds.push_back(fd);
      options.policy_flags_used = true;
    } else if (arg == "--memory" || arg == "--shm") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      auto bytes = parse_byte_size(text);
      if (!bytes.ok()) return usage_error(std::string(arg) + ": " + bytes.error().message);
      (arg == "--memory" ? policy.limits.memory_bytes : policy.limits.shm_bytes) = *bytes;
      if (arg == "--memory") policy.limits.memory_given = true;
      options.policy_flags_used = true;
    } else if (arg == "--cpus") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      auto millis = parse_cpu_millis(text);
      if (!millis.ok()) return usage_error(std::string(arg) + ": " + millis.error().message);
      policy.limits.cpu_millis = *millis;
      options.cpus_given = true;
      options.policy_flags_used = true;
    } else if (arg == "--pids") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(pids, parse_int(arg, text, kMinPids));
      policy.limits.pids = pids;
      options.policy_flags_used = true;
    } else if (arg == "--policy-fd" || arg == "--error-fd" || arg == "--net-fd" ||
               arg == "--cgroup-fd" || arg == "--lifeline-fd" || arg == "--stop-fd") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(fd, parse_int(arg, text, 0));
      (arg == "--policy-fd"   ? options.policy_fd
       : arg == "--error-fd"  ? options.error_fd
       : arg == "--net-fd"    ? options.net_fd
       : arg == "--cgroup-fd" ? options.cgroup_fd
       : arg == "--stop-fd"   ? options.stop_fd
                              : options.lifeline_fd) = fd;
    } else if (arg == "--listen") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(port, parse_int(arg, text, 1));
      if (port > 65535) return usage_error("--listen: port " + std::string(text) + " out of range");
      options.listen_ports.push_back(port);
    } else if (arg == "--allow-bind" || arg == "--allow-connect") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(port, parse_int(arg, text, 1));
      if (port > 65535)
        return usage_error(std::string(arg) + ": port " + std::string(text) + " out of range");
      (arg == "--allow-bind" ? policy.tcp_bind : policy.tcp_connect).push_back(port);
      options.policy_flags_used = true;
    } else if (arg == "--backend") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      if (text != "auto" && text != "namespaces" && text != "landlock")
        return usage_error("--backend: '" + std::string(text) +
                           "' is not auto, namespaces or landlock");
      options.backend = std::string(text);
    } else if (arg == "--join") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(pid, parse_int(arg, text, 1));
      options.join_pid = pid;
    } else if (arg == "--exit-with") {
      STACKIE_TRY_ASSIGN(text, value(arg));
      STACKIE_TRY_ASSIGN(pid, parse_int(arg, text, 1));
      options.exit_with_pid = pid;
    } else {
      return usage_error("unknown option '" + std::string(arg) + "' (see --help)");
    }
  }
  for (; i < argc; ++i) options.command.emplace_back(argv[i]);
  if (!options.print_policy && !options.print_backend) {
    if (!saw_separator) return usage_error("missing '--' before COMMAND (see --help)");
    if (options.command.empty()) return usage_error("missing COMMAND after '--'");
  }
  STACKIE_TRY(check_options(options));
  return options;
}

Status check_options(const Options& options) {
  if (options.policy_fd >= 0 && options.policy_flags_used)
    return usage_error("--policy-fd cannot be combined with the policy options");
  if (options.policy_fd >= 0 && options.policy_fd == options.error_fd)
    return usage_error("--policy-fd and --error-fd must be different fds");
  if (!options.listen_ports.empty() && options.net_fd < 0)
    return usage_error("--listen needs --net-fd (the listeners are sent there)");
  if (options.net_fd >= 0 &&
      (options.net_fd == options.policy_fd || options.net_fd == options.error_fd))
    return usage_error("--net-fd must differ from --policy-fd and --error-fd");
  if (options.cgroup_fd >= 0 &&
      (options.cgroup_fd == options.policy_fd || options.cgroup_fd == options.error_fd ||
       options.cgroup_fd == options.net_fd))
    return usage_error("--cgroup-fd must differ from --policy-fd, --error-fd and --net-fd");
  if (options.lifeline_fd >= 0 &&
      (options.lifeline_fd == options.policy_fd || options.lifeline_fd == options.error_fd ||
       options.lifeline_fd == options.net_fd || options.lifeline_fd == options.cgroup_fd))
    return usage_error("--lifeline-fd must differ from the other fds");
  if (options.stop_fd >= 0 &&
      (options.stop_fd == options.policy_fd || options.stop_fd == options.error_fd))
    return usage_error("--stop-fd must differ from --policy-fd and --error-fd");
  if (options.join_pid != 0) {
    if (options.exit_with_pid != 0) return usage_error("--join cannot take --exit-with");
    if (options.stop_fd >= 0) return usage_error("--join cannot take --stop-fd");
    if (options.policy_fd >= 0) return usage_error("--join cannot take --policy-fd");
    if (options.cgroup_fd >= 0) return usage_error("--join cannot take --cgroup-fd");
    if (options.net_fd >= 0) return usage_error("--join cannot take --net-fd or --listen");
    const SandboxPolicy& p = options.policy;
    if (!p.read_only.empty() || !p.read_write.empty() || !p.tmpfs.empty() ||
        !p.host_tmp_dir.empty() || !p.pass_fds.empty())
      return usage_error(
          "--join enters an existing sandbox: only --setenv, --pass-env, --chdir and --name "
          "apply");
  }
  if (options.policy_fd < 0) {
    Status valid = validate(options.policy);
    if (!valid.ok()) return valid;
  }
  return {};
}

}  // namespace stackie::lockbox
