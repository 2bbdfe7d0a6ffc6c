// Every process descended from a block on macOS, where no pid namespace holds them together
// (DESIGN.md §5b, docs/macos.md "Total death"). Tracked with kqueue: EVFILT_PROC
// NOTE_FORK|NOTE_EXIT on each known pid, and on each fork proc_listchildpids to learn the new
// child (kqueue says that a process forked, not which child it made). Compiled only when
// sandbox=seatbelt.
//
// The residual race: a process that forks and exits before the monitor has read the fork event
// leaves its child to launchd (ppid 1), out of reach of proc_listchildpids. Such orphans are
// still found when they stay in a session or process group the monitor has seen (the sweep in
// kill_all walks every process of the user); what escapes is an orphan that made a session of
// its own before the monitor learned its pid, i.e. fork, setsid and exit all within the few
// microseconds the monitor needs to handle one event. It stays inside the Seatbelt profile
// (a sandbox is inherited and cannot be left), so it keeps no more rights than the block had.
#pragma once

#include <sys/types.h>

#include <set>

#include "base/error.h"

namespace stackie::seatbelt {

class Descendants {
 public:
  // `kq` is the monitor's kqueue: the EVFILT_PROC events land there.
  explicit Descendants(int kq);

  // Watch `pid` and, recursively, the children it already has. False if it is already gone.
  bool add(pid_t pid);
  // Handle one EVFILT_PROC event of a known pid.
  void on_fork(pid_t pid);
  void on_exit(pid_t pid);
  // Look again for children of every known pid (a periodic safety net).
  void rescan();
  // Stop every known process, find the rest of the tree while nothing can fork (children of
  // stopped processes, every process of this user in a session or group seen before), until
  // nothing new turns up; then SIGKILL them all. Returns how many processes were killed.
  int kill_all();

  bool empty() const { return live_.empty(); }

 private:
  void add_children_of(pid_t pid);
  int sweep_sessions();

  int kq_;
  pid_t own_session_;
  pid_t own_group_;
  std::set<pid_t> live_;      // watched and not yet seen to exit
  std::set<pid_t> sessions_;  // session ids of tracked processes (never the monitor's own)
  std::set<pid_t> groups_;    // process group ids likewise
};

}  // namespace stackie::seatbelt
