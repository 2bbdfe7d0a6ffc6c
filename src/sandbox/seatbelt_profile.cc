#include "sandbox/seatbelt_profile.h"

#include <set>
#include <vector>

namespace stackie {

namespace {

// What a dynamically linked program needs to start on macOS 12+: dyld and its shared cache
// (which lives in the preboot cryptex since macOS 13), the system libraries and frameworks,
// the usual tools, locale/timezone data and the /etc files libc reads (/etc is /private/etc).
constexpr std::string_view kSystemReadOnly[] = {
    "/System/Library",
    "/System/Volumes/Preboot/Cryptexes/OS",
    "/usr/lib",
    "/usr/libexec",
    "/usr/share",
    "/usr/bin",
    "/usr/sbin",
    "/bin",
    "/sbin",
    "/Library/Apple/System/Library",
    "/private/etc",
    "/private/var/db/timezone",
    "/private/var/db/dyld",
};

// Device nodes every program may use. /dev/null and friends are also writable.
constexpr std::string_view kDevicesReadWrite[] = {
    "/dev/null",
    "/dev/zero",
    "/dev/tty",
    "/dev/dtracehelper",
};
constexpr std::string_view kDevicesReadOnly[] = {
    "/dev/random",
    "/dev/urandom",
};

// Mach services a block may look up: syslog/os_log, notifications (libc time zone changes),
// and user/group lookups (getpwuid: postgres needs it). Nothing that can launch a process.
constexpr std::string_view kMachServices[] = {
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.system.opendirectoryd.libinfo",
};

// Name resolution goes through mDNSResponder; only modes with a network get it.
constexpr std::string_view kResolverService = "com.apple.mDNSResponder";

// These start or talk to processes outside the sandbox (open(1), AppleScript): denied last, so
// the deny wins over any allow before it.
constexpr std::string_view kLaunchServices[] = {
    "com.apple.coreservices.launchservicesd",
    "com.apple.coreservices.quarantine-resolver",
    "com.apple.lsd.mapdb",
    "com.apple.lsd.modifydb",
    "com.apple.coreservices.appleevents",
};

bool usable_path(std::string_view path) {
  return !path.empty() && path[0] == '/' && path.find('\0') == std::string_view::npos;
}

// "/a/b/c" -> "/", "/a", "/a/b": stat() of each is needed to reach the path (realpath, getcwd).
void add_ancestors(std::string_view path, std::set<std::string>& out) {
  out.insert("/");
  for (size_t slash = path.find('/', 1); slash != std::string_view::npos;
       slash = path.find('/', slash + 1))
    out.insert(std::string(path.substr(0, slash)));
}

class ProfileWriter {
 public:
  void line(std::string_view text) {
    out_ += text;
    out_ += '\n';
  }
  // (allow OPERATIONS (FILTER "path") ...) with one filter per line.
  void rule(std::string_view action, std::string_view operations, std::string_view filter,
            const std::vector<std::string>& values) {
    if (values.empty()) return;
    out_ += '(';
    out_ += action;
    out_ += ' ';
    out_ += operations;
    for (const auto& value : values) {
      out_ += "\n  (";
      out_ += filter;
      out_ += ' ';
      out_ += sbpl_string_literal(value);
      out_ += ')';
    }
    out_ += ")\n";
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

template <typename Range>
std::vector<std::string> strings(const Range& range) {
  return std::vector<std::string>(std::begin(range), std::end(range));
}

}  // namespace

std::string sbpl_string_literal(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  out += '"';
  return out;
}

std::string seatbelt_profile(const SandboxPolicy& policy) {
  std::vector<std::string> read_only;
  std::vector<std::string> read_write;
  std::set<std::string> ancestors;
  for (const auto& bind : policy.read_only)
    if (usable_path(bind.source)) read_only.push_back(bind.source);
  for (const auto& bind : policy.read_write)
    if (usable_path(bind.source)) read_write.push_back(bind.source);
  if (usable_path(policy.host_tmp_dir)) read_write.push_back(policy.host_tmp_dir);
  for (const auto& path : read_only) add_ancestors(path, ancestors);
  for (const auto& path : read_write) add_ancestors(path, ancestors);

  ProfileWriter w;
  w.line("(version 1)");
  w.line("(deny default)");

  // Processes: the block may fork and exec (exec still needs the file to be readable below),
  // and signal only processes of its own sandbox.
  w.line("(allow process-fork)");
  w.line("(allow process-exec)");
  w.line("(allow signal (target same-sandbox))");
  w.line("(allow sysctl-read)");
  // Shared memory and semaphores (postgres, redis): POSIX and System V.
  w.line("(allow ipc-posix-shm ipc-posix-sem ipc-sysv-shm ipc-sysv-sem)");
  std::vector<std::string> services = strings(kMachServices);
  if (policy.network != NetworkMode::none) services.emplace_back(kResolverService);
  w.rule("allow", "mach-lookup", "global-name", services);

  // Files: metadata of each ancestor (to walk to a granted path), then the grants themselves.
  w.rule("allow", "file-read-metadata", "literal",
         std::vector<std::string>(ancestors.begin(), ancestors.end()));
  if (policy.system_view) {
    w.rule("allow", "file-read* file-map-executable", "subpath", strings(kSystemReadOnly));
    w.rule("allow", "file-read* file-write-data file-ioctl", "literal", strings(kDevicesReadWrite));
    w.rule("allow", "file-read*", "literal", strings(kDevicesReadOnly));
  }
  w.rule("allow", "file-read* file-map-executable", "subpath", read_only);
  w.rule("allow", "file-read* file-write* file-map-executable", "subpath", read_write);

  // Network. `none`: nothing (deny default). `localhost`: listen and connect on the loopback
  // only, which is where the daemon's forwarder reaches the block (DESIGN.md §6).
  switch (policy.network) {
    case NetworkMode::none: break;
    case NetworkMode::localhost:
      w.line("(allow network-bind network-inbound (local ip \"localhost:*\"))");
      w.line("(allow network-outbound (remote ip \"localhost:*\"))");
      break;
    case NetworkMode::host: w.line("(allow network*)"); break;
  }

  // Last, so they win over anything above: no LaunchServices, no Apple Events.
  w.rule("deny", "mach-lookup", "global-name", strings(kLaunchServices));
  w.line("(deny appleevent-send)");
  return w.take();
}

}  // namespace stackie
