#include "sandbox/seatbelt_profile.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "base/safe_open.h"
#include "base/sha256.h"

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
// A process's own descriptors by name (/dev/stdin is /dev/fd/0): opening one only duplicates
// a descriptor the process already holds. initdb reads its password file from /dev/stdin.
constexpr std::string_view kOwnDescriptors[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
constexpr std::string_view kOwnDescriptorDir = "/dev/fd";
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

// Name resolution goes through mDNSResponder (its Mach service and its socket); only a block
// that may connect somewhere gets it: a resolver answers about the whole network and is itself
// a way out (DNS queries carry data).
constexpr std::string_view kResolverService = "com.apple.mDNSResponder";
constexpr std::string_view kResolverSocket = "/private/var/run/mDNSResponder";

// sysctl names a program reads to size itself (CPU count and features, memory, page size) or to
// name the system (uname(3), os version). Nothing that lists or describes other processes:
// kern.proc.* and kern.procargs2 (another process's argv and environment) stay denied, as does
// everything about the network, the disks and the kernel's tunables.
constexpr std::string_view kSysctlNames[] = {
    "hw.activecpu",
    "hw.byteorder",
    "hw.cachelinesize",
    "hw.cpufamily",
    "hw.cpusubtype",
    "hw.cputype",
    "hw.l1dcachesize",
    "hw.l1icachesize",
    "hw.l2cachesize",
    "hw.l3cachesize",
    "hw.logicalcpu",
    "hw.logicalcpu_max",
    "hw.machine",
    "hw.memsize",
    "hw.model",
    "hw.ncpu",
    "hw.nperflevels",
    "hw.pagesize",
    "hw.physicalcpu",
    "hw.physicalcpu_max",
    "kern.argmax",
    "kern.boottime",
    "kern.hostname",
    "kern.maxfiles",
    "kern.maxfilesperproc",
    "kern.ngroups",
    "kern.osproductversion",
    "kern.osrelease",
    "kern.osrevision",
    "kern.ostype",
    "kern.osversion",
    "kern.secure_kernel",
    "kern.usrstack64",
    "kern.version",
    "kern.ipc.somaxconn",
    "sysctl.proc_cputype",
    "sysctl.proc_translated",
    "vm.pagesize",
};
constexpr std::string_view kSysctlPrefixes[] = {
    "hw.optional.",  // CPU features (libc, crypto, JITs pick code paths by them)
    "hw.perflevel",  // P/E core counts (runtimes size their thread pools)
    "machdep.cpu.",  // brand string, features, core count
    "kern.sysv.",    // postgres checks the SysV shared memory limits
};

// libnotify's shared page: read-only, and every process's notify_* calls want it.
constexpr std::string_view kNotifyShm = "apple.shm.notification_center";

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
  // The same, each value inside an outer filter: (allow OPS (OUTER (FILTER "path"))), as unix
  // socket addresses are written: (local unix-socket (subpath "/dir")).
  void nested_rule(std::string_view action, std::string_view operations, std::string_view outer,
                   std::string_view filter, const std::vector<std::string>& values) {
    if (values.empty()) return;
    out_ += '(';
    out_ += action;
    out_ += ' ';
    out_ += operations;
    for (const auto& value : values) {
      out_ += "\n  (";
      out_ += outer;
      out_ += " (";
      out_ += filter;
      out_ += ' ';
      out_ += sbpl_string_literal(value);
      out_ += "))";
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

std::vector<std::string> loopback(const std::vector<int>& ports) {
  std::vector<std::string> out;
  for (int port : ports)
    if (port > 0 && port < 65536) out.push_back("localhost:" + std::to_string(port));
  return out;
}

}  // namespace

std::string seatbelt_ipc_prefix(std::string_view sandbox_name) {
  // A stack file chooses its sandbox names, so the prefix must be one no name can be searched
  // into: 65 bits of SHA-256 (a 32-bit hash took seconds to collide with another block's).
  // Written in base32 to stay short: macOS POSIX IPC names hold 31 bytes in all.
  const std::array<uint8_t, 32> digest = sha256("stackie-ipc:" + std::string(sandbox_name));
  static constexpr char kBase32[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out = "s";
  for (int bit = 0; bit < 65; bit += 5) {
    unsigned pair = (unsigned{digest[bit / 8]} << 8) | digest[bit / 8 + 1];
    out += kBase32[(pair >> (11 - bit % 8)) & 31];
  }
  out += '.';
  return out;
}

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
  w.rule("allow", "sysctl-read", "sysctl-name", strings(kSysctlNames));
  w.rule("allow", "sysctl-read", "sysctl-name-prefix", strings(kSysctlPrefixes));
  // POSIX shared memory and semaphores: only names under this block's prefix, so no block can
  // open another's objects (names are host-wide). System V has no names to filter, only
  // numeric keys: it stays allowed because postgres needs it (its main segment and
  // semaphores); see docs/macos.md for what that leaves open.
  const std::string ipc_prefix = seatbelt_ipc_prefix(policy.name);
  w.rule("allow", "ipc-posix-shm* ipc-posix-sem*", "ipc-posix-name-prefix",
         {"/" + ipc_prefix, ipc_prefix});
  w.rule("allow", "ipc-posix-shm-read-data", "ipc-posix-name", {std::string(kNotifyShm)});
  w.line("(allow ipc-sysv-shm ipc-sysv-sem)");
  // Outbound network of any kind: `host`, or `localhost` with something to consume.
  const bool outbound = policy.network == NetworkMode::host ||
                        (policy.network == NetworkMode::localhost && !policy.tcp_connect.empty());
  std::vector<std::string> services = strings(kMachServices);
  if (outbound) services.emplace_back(kResolverService);
  w.rule("allow", "mach-lookup", "global-name", services);

  // Files: metadata of each ancestor (to walk to a granted path), then the grants themselves.
  w.rule("allow", "file-read-metadata", "literal",
         std::vector<std::string>(ancestors.begin(), ancestors.end()));
  if (policy.system_view) {
    w.rule("allow", "file-read* file-map-executable", "subpath", strings(kSystemReadOnly));
    w.rule("allow", "file-read* file-write-data file-ioctl", "literal", strings(kDevicesReadWrite));
    w.rule("allow", "file-read*", "literal", strings(kDevicesReadOnly));
    w.rule("allow", "file-read* file-write-data", "literal", strings(kOwnDescriptors));
    w.rule("allow", "file-read* file-write-data", "subpath", {std::string(kOwnDescriptorDir)});
  }
  w.rule("allow", "file-read* file-map-executable", "subpath", read_only);
  w.rule("allow", "file-read* file-write* file-map-executable", "subpath", read_write);

  // Unix sockets inside the block's own runtime (temp) directory, in every mode: postgres puts
  // its socket there, and `stackie exec ... psql` connects to it. Nothing else of the host's.
  if (usable_path(policy.host_tmp_dir)) {
    w.nested_rule("allow", "network-bind network-inbound", "local unix-socket", "subpath",
                  {policy.host_tmp_dir});
    w.nested_rule("allow", "network-outbound", "remote unix-socket", "subpath",
                  {policy.host_tmp_dir});
  }

  // Network. `none`: nothing (deny default). `localhost`: macOS has no network namespace, so
  // the block shares the host's loopback and the profile itself lets only declared ports
  // cross: listen on its own served ports, connect to the ports it consumes, nothing else (no
  // other loopback port, no other address). `host`: everything.
  switch (policy.network) {
    case NetworkMode::none: break;
    case NetworkMode::localhost:
      w.rule("allow", "network-bind network-inbound", "local ip", loopback(policy.tcp_bind));
      w.rule("allow", "network-outbound", "remote ip", loopback(policy.tcp_connect));
      break;
    case NetworkMode::host: w.line("(allow network*)"); break;
  }
  if (outbound) w.rule("allow", "network-outbound", "literal", {std::string(kResolverSocket)});

  // Last, so they win over anything above (the last rule that matches decides). What the block
  // is shown read-only inside what it may write (its stack file and .env in its project, which
  // Linux binds read-only on top) stays read-only. And each directory it is given to write, as
  // on Linux where each is a mount point, cannot itself be removed, renamed away or made again:
  // a volume swapped for a link would name the link's target in the next start's profile, and a
  // project directory on the way to its stack file renamed away would leave a fresh one.
  std::vector<std::string> read_only_inside;
  for (const auto& path : read_only)
    if (std::any_of(read_write.begin(), read_write.end(), [&](const std::string& dir) {
          auto below = path_below(dir, path);
          return below && !below->empty();
        }))
      read_only_inside.push_back(path);
  w.rule("deny", "file-write*", "subpath", read_only_inside);
  w.rule("deny", "file-write-unlink file-write-create", "literal", read_write);
  // What decides the next up and does not exist yet (a .env, .git): not made by the block,
  // which Linux, with nothing to bind over, cannot prevent.
  std::vector<std::string> no_create;
  for (const auto& path : policy.no_create)
    if (usable_path(path)) no_create.push_back(path);
  w.rule("deny", "file-write-create", "literal", no_create);
  // No LaunchServices, no Apple Events.
  w.rule("deny", "mach-lookup", "global-name", strings(kLaunchServices));
  w.line("(deny appleevent-send)");
  return w.take();
}

}  // namespace stackie
