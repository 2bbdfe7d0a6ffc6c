// What one stack's blocks can do to another stack (issue 14's seams, across stacks). A block
// with `path: .` in ~/projects writes ~/projects/app too: the stack file of a second project
// there (it could rewrite it to `sandbox: false` and a command of its own, which the next `up`
// of that stack would run with the user's rights), and the directories that stack's blocks are
// given (a link planted there would be followed into them). Within one stack the loader guards
// against this (stack/writable_dirs.h); across stacks only the daemon sees both.
//
// So the daemon keeps, per stack file, the directories its blocks can write and the
// paths that decide how it runs, in $STACKIE_HOME/neighbours.json, kept across `down` and
// restarts (what a block wrote stays written). An `up` is refused when either stack's blocks
// can write where the other is decided; a stack whose file is gone, and that is not up, is
// forgotten. Each block is
// also told, at each start, the known stacks' writable directories above what it is given, so
// that the lockbox follows no link there (SandboxPolicy::link_free_roots): also those of a stack
// brought up after it.
//
// Within one stack, what decides the next `up` and exists is shown read-only to the blocks
// that could write it (the loader's overlays); what does not exist yet cannot be (a `.env`, a
// companion secrets file, an optional env_file, a stack file a substack directory would take
// first, a missing catalog directory): a block could make it, and the next `up` would read it.
// So a record also holds those absent paths, and whether the stack's blocks may be running.
// When they stop (its `down`, or the daemon's start after they died with the last one), each
// absent path that exists is recorded as that file (FileIdentity: not a timestamp, which the
// removal of another name of the file moves); the next `up` is refused while that same file
// is there. One made with the blocks stopped is the user's, and read; the user's answer to a
// refusal is to read the file and write it anew (a new file), or remove it. While the blocks
// run, any absent path that exists is refused: nobody can tell who made it.
//
// Such a file keeps what it is when its name changes: a project moved with `mv`, or a file
// renamed into another project, is the same inode (a copy is a new file, and is read). So every
// `up` compares its decisive files (and what a link among them leads to) with the files blocks
// of any stack were seen to make, and a record whose stack file is gone is kept while it holds
// such files (the file may come back with a branch, or have moved with its project). A
// directory that moved while the blocks could write it took what they made with it unseen: the
// record then keeps the directory's identity and the name, and the file found under that name
// in that directory, wherever it is, is taken as theirs until made anew. Beyond kMaxPlanted,
// those no longer at their place that were seen longest ago are forgotten.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "stack/file_kind.h"
#include "stack/stack_model.h"

namespace stackie {

class StackNeighbours {
 public:
  // Files a block was seen to make, kept across records whose stack is gone: a bound on what a
  // user who switches branches for years collects (each is a few hundred bytes).
  static constexpr size_t kMaxPlanted = 256;

  // Reads it; a missing or unreadable file is empty. `max_planted`: see forget_oldest_planted.
  explicit StackNeighbours(std::string path, size_t max_planted = kMaxPlanted);

  // Whether the stack of this file is up now (the daemon's state): its record is kept even
  // while its file is missing (a branch switched, a file moved away), since its blocks run.
  void set_up_check(std::function<bool(const std::string& file)> is_up) {
    is_up_ = std::move(is_up);
  }

  // An error naming the block, the directory and both stacks when `stack`'s blocks can write
  // where another known stack is decided, or another's blocks where `stack` is; or naming the
  // file and the block when a path absent at its last `up` was made while its blocks could
  // write there. (A stack that is not up whose blocks were not seen to stop is taken as
  // stopped now, first: writers_stopped.)
  Status check(const ResolvedStack& stack);
  // The blocks of the stack of `file` are gone (its `down`): records the absent paths that
  // exist now as made by them. Nothing while the file's stack is still up (`up -p` under a
  // second name). Written to the file.
  Status writers_stopped(const std::string& file);
  // At the daemon's start: the blocks of a stack that is not up died with the daemon before.
  void settle_stopped();
  // Adds to a sandboxed block's policy, as it starts, every known stack's writable directories
  // that hold something it is given (SandboxPolicy::link_free_roots).
  void confine(SandboxPolicy& policy) const;
  // Records `stack` (replacing what an earlier `up` of it recorded) and writes the file.
  Status remember(const ResolvedStack& stack);
  const std::string& path() const { return path_; }
  // Why the file could not be read ("" when it was, or is missing): the daemon logs it.
  const std::string& load_error() const { return load_error_; }

 private:
  struct Entry {
    std::string stack;
    std::string file;
    std::vector<WritableDir> writable;
    std::vector<std::string> decisive;
    std::vector<AbsentDecisive> absent;
    // The directory of each absent path as it was at the `up` (by index; empty in an older
    // record): one that is another or gone when the blocks stop has moved.
    std::vector<FileIdentity> absent_dirs;
    bool writers_running = false;  // from its `up` until its blocks are seen gone
    // Absent paths that existed when the blocks stopped: that file (identity) is theirs.
    struct Planted {
      AbsentDecisive absent;
      FileIdentity identity;  // all zero: not known yet
      long long seen_at = 0;  // seconds since the epoch: the oldest are forgotten first
      // Set when its directory moved before the blocks stopped: the file of this name in this
      // directory, wherever it is, is theirs (its identity is taken when first seen).
      FileIdentity moved_dir;
    };
    std::vector<Planted> planted;
  };
  Status check_appeared(const ResolvedStack& stack);
  // A decisive file of `stack` that is a file some stack's blocks made, under any name.
  Status check_planted_anywhere(const ResolvedStack& stack);
  // Keeps at most max_planted_ planted files in all: of those no longer at their place (and
  // of moved directories' records), the ones seen longest ago go first; one still at its place
  // is never forgotten.
  void forget_oldest_planted();
  // Records what the blocks of `entry` made (writers_stopped); false when nothing changed.
  static bool record_planted(Entry& entry);
  Status save() const;
  // The records of other stack files that still exist.
  std::vector<const Entry*> others(const ResolvedStack& stack) const;

  // A record that still counts: its file exists, or its stack is up.
  bool live(const Entry& entry) const;

  std::string path_;
  size_t max_planted_;
  std::map<std::string, Entry> entries_;  // by stack file, resolved
  std::function<bool(const std::string& file)> is_up_;
  std::string load_error_;
};

}  // namespace stackie
