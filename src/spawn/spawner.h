// The daemon-facing spawning interface (DESIGN.md §1, end). The sandbox module owns *spawning*
// a block, not "apply a policy to the current process": Windows must create the process itself
// (restricted token, suspended, Job object), so uv_spawn cannot be the common denominator.
// libuv types are fine here (libuv is the daemon's substrate); no cJSON/yaml/seccomp types.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "policy/policy.h"
#include "spawn/cgroup_tree.h"

namespace stackie {

// linux_landlock: the Linux lockbox without namespaces, for hosts that deny them
// (stackie-lockbox(1) BACKENDS): blocks share the host's network (their ports are bound there
// directly) and pid space.
enum class SandboxKind {
  linux_namespaces,
  linux_landlock,
  seatbelt,
  restricted_token,
  passthrough
};

// The one table of names, shared by IPC, logs and `ps`.
std::string_view to_string(SandboxKind kind);

// A fresh, unconnected, non-blocking TCP socket (an fd the callee now owns), or the error.
using SocketDone = std::function<void(Result<int>)>;

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH of the policy's environment
  SandboxPolicy policy;           // environment and working_dir apply to every backend
  // Initialised (uv_pipe_init) but unopened pipes the spawner wires as the child's stdout and
  // stderr; the caller reads them. nullptr = /dev/null.
  uv_pipe_t* stdout_pipe = nullptr;
  uv_pipe_t* stderr_pipe = nullptr;
  // Called once when the block's command itself has been exec'd (for the lockbox: the sandbox
  // is built and the error fd closed without a report). Only then is the block really alive.
  // Backends whose spawn returns after the exec (uv_spawn waits for it) call it from spawn().
  std::function<void()> on_exec;
  // `network: localhost` blocks of a backend with network namespaces (DESIGN.md §6): the
  // process answers Process::inside_socket, and before the block starts it listens on
  // 127.0.0.1:PORT inside for each of these ports (its `consumes`); on_listeners gets those
  // listening fds, in this order, on the loop.
  bool net_channel = false;
  std::vector<int> inside_listen_ports;
  std::function<void(std::vector<int> fds)> on_listeners;
};

// How long a sandbox's monitor may take to end its sandbox after kill_all before it is
// SIGKILLed without waiting any longer (spawn_lockbox.cc).
inline constexpr uint64_t kKillBackstopMs = 10000;

struct ExitStatus {
  int64_t exit_status = 0;  // as waitpid reports it, for the process we hold
  int term_signal = 0;      // nonzero when that process died of a signal
  // Set when the sandbox could not be built (lockbox exit 125 with a report on the error fd):
  // the lockbox's own message, to be shown to the user verbatim.
  std::string setup_error;
  // Killed, the sandbox had not ended kKillBackstopMs later, and its monitor was SIGKILLed
  // without waiting for it: a process of the block may have outlived it.
  bool outlived_kill = false;
  bool success() const { return exit_status == 0 && term_signal == 0 && setup_error.empty(); }
};

// Called once, on the loop, after the process exited (and, for the lockbox, after its error
// report was read). Never called after the Process object is destroyed.
using ExitCallback = std::function<void(const ExitStatus&)>;

// A running (or exited) block process. Destroying it kills whatever still runs (kill_all) and
// releases its handles; no exit callback follows.
class Process {
 public:
  virtual ~Process() = default;
  virtual int pid() const = 0;
  virtual bool running() const = 0;
  // Deliver the block's stop signal so that it reaches the block (not only a launcher).
  virtual Status signal(int signum) = 0;
  // SIGKILL the whole sandbox (process group / pid namespace): nothing of the block survives.
  virtual Status kill_all() = 0;
  // The argv that runs `command` inside this block's sandbox (exec health checks, `stackie
  // exec`); empty while not running. `pass_env`: names whose values the caller puts in the
  // environment of the spawned argv and that `command` must see (a sandbox launcher starts
  // `command` with an empty environment otherwise).
  virtual std::vector<std::string> join_argv(const std::vector<std::string>& command,
                                             const std::vector<std::string>& pass_env) const = 0;
  // A socket made inside the block's own network namespace (SpawnRequest::net_channel):
  // connecting it to 127.0.0.1:P reaches the block's port P. `done` runs on the loop, or at
  // once with an error when the block has no such namespace or is gone.
  virtual void inside_socket(SocketDone done) {
    done(Error{UV_ENOTSUP, "this block has no network namespace of its own"});
  }
  // What the block uses now, read from its cgroup; nullopt where it has none (rlimits).
  virtual std::optional<CgroupUsage> usage() const { return std::nullopt; }
};

class Spawner {
 public:
  virtual ~Spawner() = default;
  virtual SandboxKind kind() const = 0;
  // How this spawner enforces SandboxPolicy::limits, in one line for status, doctor and the
  // daemon's log: "cgroup v2 (DIR)", "rlimits (WHY no cgroup)", "none (...)".
  virtual std::string limits_enforcement() const { return "none (an unsandboxed process)"; }
  virtual Result<std::unique_ptr<Process>> spawn(uv_loop_t* loop, const SpawnRequest& request,
                                                 ExitCallback on_exit) = 0;
};

// No isolation: uv_spawn the command in its own session and process group; kill_all is
// kill(-pgid, SIGKILL). Used for `sandbox: false` blocks and --no-sandbox.
// `monitor`: the program run as passthrough_monitor.h describes (stackied itself); empty =
// the block is spawned directly and survives the daemon's death (tests of the spawner alone).
std::unique_ptr<Spawner> make_passthrough_spawner(std::string monitor = {});

// uv_spawn `stackie-lockbox --policy-fd 3 --error-fd 4 -- ARGV`; the policy travels as JSON on
// an inherited pipe (no temp file), setup failures come back on the error pipe. With `cgroups`,
// each block gets a cgroup of its own holding its limits (--cgroup-fd); without, the lockbox
// applies them as rlimits and `no_cgroup_reason` says why (stackie doctor, status).
// `landlock`: the lockbox runs with --backend landlock (else --backend namespaces).
std::unique_ptr<Spawner> make_lockbox_spawner(std::string lockbox_path,
                                              std::unique_ptr<CgroupTree> cgroups = nullptr,
                                              std::string no_cgroup_reason = "",
                                              bool landlock = false);

// The cgroup tree the service manager delegated to the daemon (Delegate=yes), taken over for
// the blocks' limits, or null with the reason there is none (the lockbox then applies rlimits;
// on Windows each block's job holds them).
struct DelegatedCgroups {
  std::unique_ptr<CgroupTree> tree;
  std::string none_because;
};
DelegatedCgroups take_delegated_cgroups();

// What this platform's stackie-lockbox is: linux_namespaces or seatbelt (spawn/lockbox_os_*.cc).
SandboxKind native_sandbox_kind();

// Where stackie-lockbox is: $STACKIE_LOCKBOX, else next to the running executable (an
// uninstalled build has both in build/src/), else STACKIE_LIBEXECDIR.
Result<std::string> find_lockbox();

}  // namespace stackie
