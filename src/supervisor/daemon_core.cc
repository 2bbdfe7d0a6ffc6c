#include "supervisor/daemon_core.h"

#include "base/directories.h"
#include "base/fs_path.h"
#include "base/safe_open.h"
#include "base/signal_name.h"
#include "stack/paths.h"
#include "stack/shared_mode.h"
#include "supervisor/host_os.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace stackie {

namespace {

Error state_not_written(const std::string& stack, const Error& why) {
  return Error{UV_EIO, "stack " + stack + " is down, but the state file could not be written (" +
                           why.message +
                           "): a daemon restart would bring it back; run 'stackie down " + stack +
                           "' again once there is room"};
}

// The shared instances are not a stack of anyone's to take down: each stops with the last
// stack that uses it.
Error shared_stack_error() {
  return Error{UV_EPERM, std::string(kSharedStack) +
                             " holds the shared instances (mode shared); each stops with the "
                             "`stackie down` of the last stack that uses it (stackie ps shows "
                             "which)"};
}

}  // namespace

int read_pid_file(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return 0;
  auto dir = open_directory(path.substr(0, slash));
  if (!dir.ok()) return 0;
  auto file = open_file_in(dir->get(), path.substr(slash + 1), O_RDONLY, path.substr(0, slash));
  if (!file.ok()) return 0;
  char buf[32] = {};
  int n = static_cast<int>(::read(file->get(), buf, sizeof buf - 1));
  return n > 0 ? std::atoi(buf) : 0;
}

Daemon::Daemon(DaemonOptions options)
    : options_(std::move(options)),
      port_memory_(options_.home + "/ports.json"),
      neighbours_(options_.home + "/neighbours.json") {}

Result<std::unique_ptr<Daemon>> Daemon::open(DaemonOptions options) {
  if (options.home.empty() || !is_absolute_path(options.home))
    return Error{UV_EINVAL, "STACKIE_HOME must be an absolute path"};
  STACKIE_TRY(make_directories(options.home));
  std::unique_ptr<Daemon> daemon(new Daemon(std::move(options)));
  const std::string& home = daemon->options_.home;
  STACKIE_TRY_ASSIGN(home_dir, open_directory(home));

  // The lock is the single-instance guarantee: the system drops it when we die, even by
  // SIGKILL, so a stale pid file never blocks a new daemon. Opened in the home directory,
  // never through a link (host_os.h: flock, or LockFileEx on Windows).
  STACKIE_TRY_ASSIGN(lock, open_file_in(home_dir.get(), "stackied.lock", O_RDWR | O_CREAT, home));
  if (Status locked = lock_instance(lock.get(), home + "/stackied.lock"); !locked.ok()) {
    if (locked.error().code != UV_EBUSY) return locked.error();
    int pid = read_pid_file(daemon->pid_path());
    return Error{UV_EBUSY, "another stackied is running for " + home +
                               (pid > 0 ? " (pid " + std::to_string(pid) + ")" : "")};
  }
  daemon->lock_fd_ = lock.release();

  // Written aside and renamed into place, relative to the home directory.
  STACKIE_TRY(replace_file_in(home_dir.get(), base_name(daemon->pid_path()),
                              std::to_string(uv_os_getpid()) + "\n", home));

  auto records = read_state_file(daemon->state_path());
  if (records.ok()) {
    daemon->records_ = std::move(records).value();
  } else {
    // A corrupt state file must not keep the daemon down: keep it aside for inspection.
    daemon->log(DaemonLogLevel::warning, records.error().message + " (moved to state.json.bad)");
    std::string state_name = base_name(daemon->state_path());
    (void)rename_in(home_dir.get(), state_name, state_name + ".bad", home);
  }

  SupervisorConfig supervisor = daemon->options_.supervisor;
  supervisor.confine_policy = [d = daemon.get()](SandboxPolicy& policy) {
    d->neighbours_.confine(policy);
  };
  daemon->supervisor_ = std::make_unique<Supervisor>(std::move(supervisor));
  if (!daemon->neighbours_.load_error().empty())
    daemon->log(DaemonLogLevel::warning, daemon->neighbours_.load_error());
  // As the file system takes each path (as the records' keys are): `up -p A -f /link/x.yml`
  // and `up -p B -f /real/x.yml` are one file, and the down of B must not stop A's blocks.
  // Up is recorded, or still run: a `down` forgets the stack at once, and its blocks may write
  // until the supervisor lets go of it.
  daemon->neighbours_.set_up_check([d = daemon.get()](const std::string& file) {
    const std::string wanted = path_for_comparison(file);
    auto same = [&](const std::string& other) { return path_for_comparison(other) == wanted; };
    for (const auto& record : d->records_)
      if (same(record.request.file)) return true;
    for (const auto& name : d->supervisor_->stacks())
      if (const StackRunner* runner = d->supervisor_->stack(name);
          runner && same(runner->spec().file))
        return true;
    return false;
  });
  // The blocks of a stack that will not be restored died with the daemon before this one.
  daemon->neighbours_.settle_stopped();
  daemon->heap_trimmer_ =
      std::make_unique<HeapTrimmer>(daemon->supervisor_->loop(), daemon->supervisor_->events());
  daemon->supervisor_->set_observer([d = daemon.get()](const BlockProgress& p) {
    d->log(p.state == BlockState::failed ? DaemonLogLevel::warning : DaemonLogLevel::info,
           p.stack + "/" + p.block + ": " + std::string(to_string(p.state)) +
               (p.reason.empty() ? "" : " (" + p.reason + ")"));
  });

  if (daemon->options_.handle_signals) {
    for (int signum : {SIGTERM, SIGINT}) {
      UvHandle<uv_signal_t> handle;
      handle.init(
          [&](uv_signal_t* h) { return uv_signal_init(daemon->options_.supervisor.loop, h); },
          daemon.get());
      uv_signal_start(
          handle.get(),
          [](uv_signal_t* h, int sig) {
            auto* self = static_cast<Daemon*>(h->data);
            self->log(DaemonLogLevel::info,
                      "received " + signal_name(sig) + ": stopping every stack");
            self->stop();
          },
          signum);
      daemon->signals_.push_back(std::move(handle));
    }
  }
  daemon->log(DaemonLogLevel::info,
              "stackied " + std::to_string(uv_os_getpid()) + " serving " + home);
  return daemon;
}

Daemon::~Daemon() {
  signals_.clear();
  heap_trimmer_.reset();  // before the supervisor: it is subscribed to its event bus
  supervisor_.reset();
  if (lock_fd_ >= 0) {
    if (read_pid_file(pid_path()) == uv_os_getpid()) {
      if (auto home = open_directory(options_.home); home.ok())
        (void)remove_file_in(home->get(), base_name(pid_path()), options_.home);
    }
    ::close(lock_fd_);
  }
}

void Daemon::log(DaemonLogLevel level, const std::string& message) const {
  if (options_.log) options_.log(level, message);
}

void Daemon::restore() {
  std::vector<StackRecord> records = records_;
  for (const auto& record : records) {
    log(DaemonLogLevel::info, "restoring stack " + record.name + " from " + record.request.file);
    std::string name = record.name;
    auto started =
        up_checked(record.request, &record.unsandboxed, nullptr, [this, name](Status status) {
          if (!status.ok())
            log(DaemonLogLevel::warning, "restore of " + name + ": " + status.error().message);
          else
            log(DaemonLogLevel::info, "stack " + name + " restored");
        });
    // It stays in the state file: `down` is how the user lets go of a stack.
    if (!started.ok())
      log(DaemonLogLevel::warning, "restore of " + name + ": " + started.error().message);
  }
}

Result<std::string> Daemon::up(UpRequest request, Supervisor::Progress progress,
                               Supervisor::Done done) {
  return up_checked(std::move(request), nullptr, std::move(progress), std::move(done));
}

Result<std::string> Daemon::up_checked(UpRequest request,
                                       const std::vector<std::string>* accepted_unsandboxed,
                                       Supervisor::Progress progress, Supervisor::Done done) {
  if (stopping_) return Error{UV_ECANCELED, "the daemon is shutting down"};
  if (!options_.loader) return Error{UV_ENOSYS, "this stackied cannot load stack files"};
  RunningBlocks running = [this](const std::string& name) {
    std::vector<std::string> names;
    // The stack's blocks, its shared ones included (which the shared stack runs).
    if (const StackRunner* runner = supervisor_->stack(name))
      for (const auto& block : runner->spec().blocks) names.push_back(block.name);
    return names;
  };
  STACKIE_TRY_ASSIGN(stack, options_.loader(request, running));
  // Part of the file, or more than its default set: the record names what runs, so that a
  // restore brings back exactly that.
  request.blocks.clear();
  if (!stack.default_selection)
    for (const auto& block : stack.blocks) request.blocks.push_back(block.name);
  // --no-sandbox is the loader's to apply, to first-party blocks only (issue 14): the daemon
  // never unsandboxes a block the loader sandboxed.
  std::vector<std::string> unsandboxed;
  for (const auto& block : stack.blocks)
    if (!block.sandboxed) unsandboxed.push_back(block.name);
  if (accepted_unsandboxed != nullptr) {
    // A restore: nobody watches, so nothing may run with less isolation than the last
    // interactive `up` showed and warned about (the stack file may have changed since).
    for (const auto& block : unsandboxed)
      if (std::find(accepted_unsandboxed->begin(), accepted_unsandboxed->end(), block) ==
          accepted_unsandboxed->end())
        return Error{UV_EPERM, "block '" + block +
                                   "' would run without a sandbox, which the last `stackie up` "
                                   "of this stack did not show; run `stackie up` to accept it"};
  }
  request.env = environment_to_keep(request.env, stack.env_referenced);
  std::string name = stack.name;
  if (auto busy = supervisor_->busy_for_up(name)) return std::move(*busy);  // nothing recorded
  // Recorded first, started after: an `up` the state file does not hold would not come back
  // after a daemon restart, so it fails here with nothing started.
  STACKIE_TRY(check_identity(name, request));
  // A shared block another stack uses with other settings: refused before it is recorded.
  STACKIE_TRY(supervisor_->check_shared(stack));
  // Another stack's block that can write where this one is decided, or the reverse: refused.
  // Recorded before it starts (what its blocks can write is written from then on; every block
  // started from now on reaches nothing through a link there); a record of a stack that then
  // fails to start costs nothing.
  STACKIE_TRY(neighbours_.check(stack));
  if (Status kept = neighbours_.remember(stack); !kept.ok())
    return Error{UV_EIO, "stack " + name + " not started: " + neighbours_.path() +
                             " could not be written (" + kept.error().message + ")"};
  std::vector<StackRecord> before = records_;
  if (Status recorded = remember(name, request, unsandboxed); !recorded.ok()) {
    records_ = std::move(before);
    return Error{UV_EIO, "stack " + name + " not started: the state file could not be written (" +
                             recorded.error().message + ")"};
  }
  port_memory_.remember(stack);
  StackOptions options;
  options.ephemeral = request.ephemeral;
  options.ephemeral_base = options_.ephemeral_base;
  // A restore is not a user's `up`: a user's `up` meanwhile joins it instead of being busy.
  bool restoring = accepted_unsandboxed != nullptr;
  supervisor_->up(std::move(stack), options, std::move(progress), std::move(done), restoring);
  return name;
}

// A stack is its name and its project directory (issue 16): a second checkout of the same
// project (a git worktree) must not take over the first one's running stack and its data.
Status Daemon::check_identity(const std::string& name, const UpRequest& request) const {
  auto directory = [](const std::string& file) { return file.substr(0, file.rfind('/')); };
  for (const auto& record : records_) {
    if (record.name != name || directory(record.request.file) == directory(request.file)) continue;
    return Error{UV_EEXIST, "stack '" + name + "' is already up from " +
                                directory(record.request.file) + " (" + record.request.file +
                                "); stop it there with `stackie down " + name +
                                "`, or give this one another name with -p NAME "
                                "(--project-name NAME)"};
  }
  return {};
}

void Daemon::down(const std::string& stack, Supervisor::Done done) {
  if (stack == kSharedStack) return done(shared_stack_error());
  auto record = std::find_if(records_.begin(), records_.end(),
                             [&](const StackRecord& r) { return r.name == stack; });
  const bool recorded = record != records_.end();
  const std::string file = recorded ? record->request.file : std::string();
  if (!supervisor_->has_stack(stack)) {
    if (recorded) {
      // It failed to restore: `down` is how the user lets go of it.
      Status forgotten = forget(stack);
      note_writers_stopped(file);
      done(forgotten.ok() ? forgotten : Status(state_not_written(stack, forgotten.error())));
      return;
    }
    done(Error{UV_ENOENT, "stack " + stack + " is not up"});
    return;
  }
  if (auto busy = supervisor_->busy_for_down(stack)) {
    done(std::move(*busy));
    return;
  }
  // The stack goes down either way (that is what was asked), but a state file still listing
  // it would bring it back after a daemon restart: the answer says so.
  Status forgotten = forget(stack);
  supervisor_->down(stack, [this, stack, file, forgotten, done = std::move(done)](Status result) {
    // Its blocks are gone (a down that failed may have left one: then not noted).
    if (result.ok()) note_writers_stopped(file);
    if (result.ok() && !forgotten.ok()) return done(state_not_written(stack, forgotten.error()));
    done(std::move(result));
  });
}

void Daemon::note_writers_stopped(const std::string& file) {
  if (file.empty()) return;
  if (Status noted = neighbours_.writers_stopped(file); !noted.ok())
    log(DaemonLogLevel::warning, neighbours_.path() + ": " + noted.error().message +
                                     " (what its blocks made is looked for at the next up "
                                     "instead)");
}

void Daemon::down_blocks(const std::string& stack, const std::vector<std::string>& blocks,
                         std::function<void(Status, std::vector<std::string>)> done) {
  if (stack == kSharedStack) return done(shared_stack_error(), {});
  const StackRunner* runner = supervisor_->stack(stack);
  if (runner == nullptr) return done(Error{UV_ENOENT, "stack " + stack + " is not up"}, {});
  // The blocks named and, transitively, whatever depends on them: a block left running without
  // what it depends on would only fail.
  std::vector<std::string> going = blocks;
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& block : runner->spec().blocks) {
      if (std::find(going.begin(), going.end(), block.name) != going.end()) continue;
      for (const auto& dependency : block.depends_on)
        if (std::find(going.begin(), going.end(), dependency) != going.end()) {
          going.push_back(block.name);
          grew = true;
          break;
        }
    }
  }
  std::vector<std::string> staying, stopped;
  for (const auto& block : runner->spec().blocks)
    (std::find(going.begin(), going.end(), block.name) != going.end() ? stopped : staying)
        .push_back(block.name);
  if (staying.empty())
    return down(stack, [done, stopped](Status result) { done(std::move(result), stopped); });
  if (auto busy = supervisor_->busy_for_down(stack)) return done(std::move(*busy), {});
  auto record = std::find_if(records_.begin(), records_.end(),
                             [&](const StackRecord& r) { return r.name == stack; });
  Status saved;
  if (record != records_.end()) {
    std::vector<StackRecord> before = records_;
    record->request.blocks = staying;
    saved = save();
    if (!saved.ok()) records_ = std::move(before);
  }
  supervisor_->remove_blocks(stack, stopped, [done, stopped, saved, stack](Status result) {
    if (result.ok() && !saved.ok())
      result = Error{UV_EIO, "stopped, but the state file could not be written (" +
                                 saved.error().message + "): a daemon restart would bring " +
                                 "them back; run 'stackie down' again once there is room"};
    done(std::move(result), stopped);
  });
}

void Daemon::stop() {
  if (stopping_) return;
  stopping_ = true;
  if (options_.on_stopping) options_.on_stopping();
  supervisor_->shutdown([this] { finish_stop(); });
}

void Daemon::finish_stop() {
  log(DaemonLogLevel::info, "every stack is down");
  for (const auto& handle : signals_) uv_signal_stop(handle.get());
  if (on_stopped_) on_stopped_();
}

Status Daemon::remember(const std::string& name, const UpRequest& request,
                        const std::vector<std::string>& unsandboxed) {
  auto it = std::find_if(records_.begin(), records_.end(),
                         [&](const StackRecord& r) { return r.name == name; });
  if (it != records_.end()) {
    if (it->request == request && it->unsandboxed == unsandboxed) return {};
    it->request = request;
    it->unsandboxed = unsandboxed;
  } else {
    records_.push_back({name, request, unsandboxed});
  }
  return save();
}

Status Daemon::forget(const std::string& name) {
  std::vector<StackRecord> before = records_;
  auto removed = std::erase_if(records_, [&](const StackRecord& r) { return r.name == name; });
  if (removed == 0) return {};
  Status saved = save();
  // Still on disk, so still recorded here: a second `down` tries the write again.
  if (!saved.ok()) records_ = std::move(before);
  return saved;
}

Status Daemon::save() {
  Status written = write_state_file(state_path(), records_);
  if (!written.ok()) log(DaemonLogLevel::error, "state file: " + written.error().message);
  return written;
}

}  // namespace stackie
