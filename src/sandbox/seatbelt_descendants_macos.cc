#include "sandbox/seatbelt_descendants.h"

#include <signal.h>
#include <sys/event.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#if __has_include(<libproc.h>)
#include <libproc.h>
#else
// libproc's listing calls, declared by hand where the SDK headers are missing (zig's bundled
// headers): both in libSystem since macOS 10.5; they return a count of pids.
extern "C" {
int proc_listchildpids(pid_t ppid, void* buffer, int buffersize);
int proc_listallpids(void* buffer, int buffersize);
}
#endif

namespace stackie::seatbelt {

namespace {

// Up to `limit` pids from a libproc listing call (which returns a count of pids, or -1).
template <typename List>
std::vector<pid_t> list_pids(List list, size_t limit) {
  std::vector<pid_t> pids(limit);
  int count = list(pids.data(), static_cast<int>(pids.size() * sizeof(pid_t)));
  if (count <= 0) return {};
  pids.resize(std::min(static_cast<size_t>(count), limit));
  std::erase_if(pids, [](pid_t pid) { return pid <= 1; });
  return pids;
}

}  // namespace

Descendants::Descendants(int kq) : kq_(kq), own_session_(getsid(0)), own_group_(getpgrp()) {}

bool Descendants::add(pid_t pid) {
  if (pid <= 1 || pid == getpid() || live_.count(pid)) return live_.count(pid) > 0;
  struct kevent change;
  EV_SET(&change, static_cast<uintptr_t>(pid), EVFILT_PROC, EV_ADD | EV_CLEAR,
         NOTE_FORK | NOTE_EXIT, 0, nullptr);
  if (kevent(kq_, &change, 1, nullptr, 0, nullptr) != 0) return false;  // ESRCH: already gone
  live_.insert(pid);
  // Remembered for the sweep: an orphan of this process keeps its session and group.
  if (pid_t sid = getsid(pid); sid > 1 && sid != own_session_) sessions_.insert(sid);
  if (pid_t pgid = getpgid(pid); pgid > 1 && pgid != own_group_) groups_.insert(pgid);
  add_children_of(pid);
  return true;
}

void Descendants::add_children_of(pid_t pid) {
  for (pid_t child : list_pids(
           [pid](void*buffer, int size) { return proc_listchildpids(pid, buffer, size); }, 4096))
    add(child);
}

void Descendants::on_fork(pid_t pid) {
  add_children_of(pid);
}

void Descendants::on_exit(pid_t pid) {
  live_.erase(pid);  // the kernel drops the knote of an exited process by itself
}

void Descendants::rescan() {
  std::vector<pid_t> known(live_.begin(), live_.end());
  for (pid_t pid : known) add_children_of(pid);
}

// Processes of this user in a session or group that a tracked process had: orphans of the
// block (reparented to launchd) that still carry its session. A pid is not reused while it
// names a live session or group, so such a process descends from the block.
int Descendants::sweep_sessions() {
  int found = 0;
  const uid_t uid = getuid();
  for (pid_t pid :
       list_pids([](void*buffer, int size) { return proc_listallpids(buffer, size); }, 1 << 16)) {
    if (live_.count(pid) || pid == getpid()) continue;
    pid_t sid = getsid(pid);
    pid_t pgid = getpgid(pid);
    if (!sessions_.count(sid) && !groups_.count(pgid)) continue;
    // Signalling needs the same uid anyway; kill(pid, 0) tells without touching it.
    if (uid != 0 && kill(pid, 0) != 0) continue;
    if (add(pid)) {
      kill(pid, SIGSTOP);
      ++found;
    }
  }
  return found;
}

int Descendants::kill_all() {
  // Freeze first: a stopped process cannot fork, so the tree stops growing while it is walked.
  // Killing a parent first would hand its children to launchd, out of proc_listchildpids' sight.
  for (int round = 0; round < 64; ++round) {
    size_t before = live_.size();
    for (pid_t pid : live_) kill(pid, SIGSTOP);
    rescan();
    int orphans = sweep_sessions();
    if (live_.size() == before && orphans == 0) break;
  }
  int killed = 0;
  for (pid_t pid : live_)
    if (kill(pid, SIGKILL) == 0) ++killed;
  return killed;
}

}  // namespace stackie::seatbelt
