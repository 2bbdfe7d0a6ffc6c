#include "policy/policy.h"

#include <set>

namespace stackie {

std::string_view to_string(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::none: return "none";
    case NetworkMode::localhost: return "localhost";
    case NetworkMode::host: return "host";
  }
  return "?";
}

std::string_view to_string(Identity identity) {
  switch (identity) {
    case Identity::root: return "root";
    case Identity::user: return "user";
  }
  return "?";
}

Result<NetworkMode> parse_network_mode(std::string_view text) {
  if (text == "none") return NetworkMode::none;
  if (text == "localhost") return NetworkMode::localhost;
  if (text == "host") return NetworkMode::host;
  return Error{
      0, "unknown network mode '" + std::string(text) + "' (expected none, localhost or host)"};
}

Result<Identity> parse_identity(std::string_view text) {
  if (text == "root") return Identity::root;
  if (text == "user") return Identity::user;
  return Error{0, "unknown identity '" + std::string(text) + "' (expected root or user)"};
}

const std::vector<std::string>& system_view_paths() {
  static const std::vector<std::string> paths = {
      "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
      // the dynamic loader, name service, resolver, time zone, TLS roots, alternatives links
      // (/etc/passwd and /etc/group are not the host's: see linux_rootfs.cc write_accounts)
      "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf",
      "/etc/hosts", "/etc/host.conf", "/etc/resolv.conf", "/etc/gai.conf", "/etc/services",
      "/etc/protocols", "/etc/localtime", "/etc/timezone", "/etc/os-release", "/etc/alternatives",
      "/etc/ssl", "/etc/ca-certificates"};
  return paths;
}

std::string hosts_file_text(const SandboxPolicy& policy) {
  std::string text = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  for (const auto& host : policy.host_names) text += "127.0.0.1\t" + host + "\n";
  return text;
}

bool policy_shows(const SandboxPolicy& policy, std::string_view path) {
  auto under = [path](std::string_view root) {
    if (root == "/") return true;
    return path.substr(0, root.size()) == root &&
           (path.size() == root.size() || path[root.size()] == '/');
  };
  if (policy.system_view)
    for (const auto& root : system_view_paths())
      if (under(root)) return true;
  for (const auto* list : {&policy.read_only, &policy.read_write})
    for (const auto& bind : *list)
      if (under(bind.source)) return true;
  return false;
}

namespace {

// Absolute, no "." or ".." components, no empty components except a trailing slash-free root.
// We refuse rather than normalise: a policy is written by code, and a surprising path is a bug.
// A Windows path is written "C:/dir" (a drive, then the same rules; never '\\').
bool is_clean_absolute(std::string_view path) {
  if (path.size() >= 3 && path[1] == ':' && path[2] == '/' &&
      ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z'))) {
    // A Windows path: there a backslash is a separator too, so "C:/data\..\.." would climb
    // out past the check of the components below. Windows paths use '/' only.
    if (path.find('\\') != std::string_view::npos) return false;
    path.remove_prefix(2);
  }
#ifdef _WIN32
  if (path.find('\\') != std::string_view::npos) return false;
#endif
  if (path.empty() || path[0] != '/') return false;
  if (path.find('\0') != std::string_view::npos) return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "." || part == "..") return false;
    if (part.empty() && end != path.size()) return false;  // "//"
    start = end + 1;
  }
  return path.size() == 1 || path.back() != '/';
}

Status check_path(std::string_view what, std::string_view path) {
  if (!is_clean_absolute(path))
    return Error{0, std::string(what) + " '" + std::string(path) +
                        "' must be an absolute path without '.', '..' or '//'"};
  return {};
}

}  // namespace

Status validate(const SandboxPolicy& policy) {
  for (char c : policy.name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return Error{0, "sandbox name '" + policy.name + "' may only contain [a-z0-9._-]"};
  }
  std::set<std::string> targets;
  auto check_bind = [&](std::string_view kind, const BindMount& bind) -> Status {
    STACKIE_TRY(check_path(std::string(kind) + " source", bind.source));
    if (!bind.dest.empty()) STACKIE_TRY(check_path(std::string(kind) + " destination", bind.dest));
    if (!targets.insert(bind.target()).second)
      return Error{0, "two mounts share the destination '" + bind.target() + "'"};
    return {};
  };
  for (const auto& bind : policy.read_only) STACKIE_TRY(check_bind("read-only path", bind));
  for (const auto& bind : policy.read_write) STACKIE_TRY(check_bind("read-write path", bind));
  for (const auto& dest : policy.tmpfs) {
    STACKIE_TRY(check_path("tmpfs destination", dest));
    if (!targets.insert(dest).second)
      return Error{0, "two mounts share the destination '" + dest + "'"};
  }
  if (!policy.working_dir.empty()) STACKIE_TRY(check_path("working directory", policy.working_dir));
  if (!policy.host_tmp_dir.empty()) STACKIE_TRY(check_path("temp directory", policy.host_tmp_dir));
  if (!policy.storage_root.empty()) STACKIE_TRY(check_path("storage root", policy.storage_root));
  for (const auto& root : policy.link_free_roots) STACKIE_TRY(check_path("link-free root", root));
  for (const auto& [name, value] : policy.environment) {
    if (name.empty() || name.find('=') != std::string::npos ||
        name.find('\0') != std::string::npos || value.find('\0') != std::string::npos)
      return Error{0, "invalid environment variable name '" + name + "'"};
  }
  for (const auto& host : policy.host_names) {
    // One line per name in /etc/hosts: a name with a space or newline would add entries.
    bool ok = !host.empty() && host.size() <= 253 && host[0] != '-' && host[0] != '.';
    for (char c : host)
      ok = ok &&
           ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_');
    if (!ok) return Error{0, "invalid host name '" + host + "' (expected [a-z0-9._-])"};
  }
  for (const auto* ports : {&policy.tcp_bind, &policy.tcp_connect})
    for (int port : *ports)
      if (port < 1 || port > 65535)
        return Error{0, "TCP port " + std::to_string(port) + " is out of range (1-65535)"};
  for (int fd : policy.pass_fds) {
    if (fd < 3) return Error{0, "pass_fds holds " + std::to_string(fd) + "; fds 0-2 always pass"};
  }
  return check_limits(policy.limits);
}

}  // namespace stackie
