#include "supervisor/stack_neighbours.h"

#include <uv.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "base/directories.h"
#include "base/fs_path.h"
#include "base/json.h"
#include "base/safe_open.h"
#include "stack/file_kind.h"
#include "stack/paths.h"
#include "stack/yaml_node.h"

namespace stackie {

namespace {

// A record per stack file (as the file system resolves it): a second file in a project, even of
// the same stack name, is another record, so that one a block planted is checked against the
// first (stackie-stack.yml is found before stackie.yml).
std::string key_of(const std::string& file) {
  return path_for_comparison(file);
}

std::vector<std::string> strings_of(const Json& list) {
  std::vector<std::string> out;
  if (list.is_array())
    for (const auto& item : list.as_array())
      if (item.is_string()) out.push_back(item.as_string());
  return out;
}

// `path` (as written or as the file system resolves it) is `dir` or below it. The writable
// directories come in both spellings already (stack/writable_dirs.cc).
bool holds(const WritableDir& dir, const std::string& path) {
  return !dir.path.empty() &&
         (path_below(dir.path, path) || path_below(dir.path, path_for_comparison(path)));
}

// The planted file is still there: the same inode (and, where the file system gives one, the
// same handle, whose generation tells a reused inode from it). The device is not compared: its
// number may change across a reboot or a remount, and a needless refusal is the safe side.
bool same_file(const FileIdentity& planted, const FileIdentity& now) {
  if (!planted.handle.empty() && !now.handle.empty())
    return planted.handle == now.handle && planted.index == now.index;
  return planted.index == now.index;
}

// The same file under another name or in another place: as same_file, and where a side has no
// handle, on the same device too (a rename keeps it), since an inode number alone is reused
// across file systems.
bool same_file_elsewhere(const FileIdentity& planted, const FileIdentity& now) {
  if (!planted.handle.empty() && !now.handle.empty()) return same_file(planted, now);
  return planted.index == now.index && planted.device == now.device;
}

bool is_known(const FileIdentity& identity) {
  return !(identity == FileIdentity{});
}

// How the user makes a file of theirs out of one a block may have made: a new inode. The
// blocks are stopped when this is the cure, but they may have left PATH.new (a link to a file
// of the user's, a second name they keep, a directory cp would copy into): it goes first.
std::string write_anew(const std::string& path) {
  const std::string fresh = path + ".new";
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    return "make it anew (rm -rf " + fresh + " && cp -a " + path + " " + fresh + " && rm -r " +
           path + " && mv " + fresh + " " + path + ")";
  return "write it anew (rm -rf " + fresh + " && cp " + path + " " + fresh + " && mv " + fresh +
         " " + path + ")";
}

// For names compared on file systems that may not tell case apart (a false match costs one
// refusal the user can cure; a miss would read what a block made).
std::string lower_ascii(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

FileIdentity identity_or_unknown(const std::string& path) {
  auto identity = file_identity(path);
  return identity ? *identity : FileIdentity{};
}

// The directory `path` is in, as the file system takes it (a project reached through a link
// is the directory the link leads to, which is what moves).
FileIdentity directory_identity(const std::string& path) {
  return identity_or_unknown(resolved_path(directory_of(path)));
}

Json identity_json(const FileIdentity& identity) {
  // Decimal strings: a device and an index may exceed what a JSON number keeps exactly.
  return Json::object({{"device", std::to_string(identity.device)},
                       {"index", std::to_string(identity.index)},
                       {"handle", identity.handle}});
}

FileIdentity identity_from(const Json& value) {
  return {std::strtoull(value["device"].string_or("0").c_str(), nullptr, 10),
          std::strtoull(value["index"].string_or("0").c_str(), nullptr, 10),
          value["handle"].string_or("")};
}

const char kAdvice[] =
    "give each stack a project directory of its own (a block's `path` or volume that holds "
    "another project is the cause)";

}  // namespace

StackNeighbours::StackNeighbours(std::string path, size_t max_planted)
    : path_(std::move(path)), max_planted_(max_planted) {
  auto text = read_text_file(path_);
  if (!text.ok()) return;
  // Larger than an IPC message may be: a record per stack file the user ever brought up.
  JsonLimits limits;
  limits.max_bytes = std::size_t{64} << 20;
  auto parsed = parse_json(*text, limits);
  if (!parsed.ok() || !parsed->is_object()) {
    // Kept aside for a look, as state.json is: the next record would overwrite it.
    const bool kept = std::rename(path_.c_str(), (path_ + ".bad").c_str()) == 0;
    load_error_ = path_ + ": " + (parsed.ok() ? "not an object" : parsed.error().message) +
                  (kept ? " (moved to " + path_ + ".bad)" : std::string()) +
                  "; what other stacks' blocks can write is known again as each comes up";
    return;
  }
  for (const auto& [key, value] : parsed->as_object()) {
    Entry entry;
    entry.stack = value["stack"].string_or("");
    entry.file = value["file"].string_or("");
    entry.decisive = strings_of(value["decisive"]);
    if (value["writable"].is_array())
      for (const auto& dir : value["writable"].as_array())
        entry.writable.push_back({dir["path"].string_or(""), dir["writer"].string_or("")});
    if (value["absent"].is_array())
      for (const auto& absent : value["absent"].as_array()) {
        entry.absent.push_back({absent["path"].string_or(""),
                                {absent["dir"].string_or(""), absent["writer"].string_or("")}});
        entry.absent_dirs.push_back(identity_from(absent["in"]));
      }
    // Missing in a record of an earlier release: its blocks may have run, so the absent paths
    // that exist at the next stop or check are taken as theirs (at worst, one refusal more).
    entry.writers_running = value["writers_running"].bool_or(true);
    if (value["planted"].is_array())
      for (const auto& planted : value["planted"].as_array())
        entry.planted.push_back(
            {{planted["path"].string_or(""),
              {planted["dir"].string_or(""), planted["writer"].string_or("")}},
             identity_from(planted),
             std::strtoll(planted["seen_at"].string_or("0").c_str(), nullptr, 10),
             identity_from(planted["moved_dir"])});
    if (entry.stack.empty() || entry.file.empty()) continue;
    entries_[key] = std::move(entry);
  }
}

bool StackNeighbours::live(const Entry& entry) const {
  return !is_missing(entry.file) || (is_up_ && is_up_(entry.file));
}

std::vector<const StackNeighbours::Entry*> StackNeighbours::others(
    const ResolvedStack& stack) const {
  std::vector<const Entry*> out;
  // The same file under another name (`up -p NAME`) or spelling (a link on the way to it) is the
  // same stack: within one stack file the loader keeps blocks from rewriting it
  // (stack/writable_dirs.h). Another file is another, whatever its stack's name.
  const std::string own = key_of(stack.file);
  for (const auto& [key, entry] : entries_)
    if (key != own && live(entry)) out.push_back(&entry);
  return out;
}

Status StackNeighbours::check_appeared(const ResolvedStack& stack) {
  auto found = entries_.find(key_of(stack.file));
  if (found == entries_.end()) return {};
  Entry& entry = found->second;
  const bool up = is_up_ && is_up_(entry.file);
  if (entry.writers_running && !up) {
    // Not up, and its blocks were not seen to stop (an up that failed before it started, a
    // down that failed): they are not running now.
    if (record_planted(entry))
      if (Status saved = save(); !saved.ok())
        return Error{saved.error().code, "stack '" + stack.name + "' not started: " + path_ +
                                             " could not be written (" + saved.error().message +
                                             ")"};
  }
  auto refusal = [&](const AbsentDecisive& absent, const std::string& cure) {
    return Error{UV_EPERM, "stack '" + stack.name + "': " + absent.path +
                               " did not exist at its last up and was made while block '" +
                               absent.dir.writer + "' could write " + absent.dir.path +
                               ": an up does not read what a block may have written. " + cure};
  };
  if (entry.writers_running)  // up: who made it cannot be told
    for (const auto& absent : entry.absent)
      if (file_identity(absent.path))
        return refusal(absent, "`stackie down " + stack.name +
                                   "` first; then read it, and if it is yours, " +
                                   write_anew(absent.path) + " and up again; if not, remove it");
  for (auto& planted : entry.planted) {
    if (is_known(planted.moved_dir) && !is_known(planted.identity))
      continue;  // its directory moved: check_planted_anywhere looks for it there
    auto now = file_identity(planted.absent.path);
    if (!now) continue;  // removed
    const FileIdentity unknown{};
    if (planted.identity == unknown && !(*now == unknown)) {
      // Unreadable when the blocks stopped (a directory on the way made 000): what is there
      // now is what they left, until written anew.
      planted.identity = *now;
      (void)save();  // unsaved, it stays unknown: refused again, never accepted
    } else if (!(*now == unknown) && !same_file(planted.identity, *now)) {
      continue;  // written anew
    }
    return refusal(planted.absent, "Read it; if it is yours, " + write_anew(planted.absent.path) +
                                       " and up again; if not, remove it");
  }
  return {};
}

bool StackNeighbours::record_planted(Entry& entry) {
  if (!entry.writers_running) return false;
  entry.writers_running = false;
  const long long now = static_cast<long long>(std::time(nullptr));
  for (size_t i = 0; i < entry.absent.size(); ++i) {
    const AbsentDecisive& absent = entry.absent[i];
    auto add = [&](Entry::Planted found) {
      auto same = [&](const Entry::Planted& p) {
        return p.absent.path == absent.path && p.identity == found.identity &&
               p.moved_dir == found.moved_dir;
      };
      if (std::none_of(entry.planted.begin(), entry.planted.end(), same))
        entry.planted.push_back(std::move(found));
    };
    // The directory first: one that moved (or was put in another's place) while the blocks
    // could write it took what they made there with it, unseen; what is at the path now is
    // taken as theirs too (the safe side).
    const FileIdentity was = i < entry.absent_dirs.size() ? entry.absent_dirs[i] : FileIdentity{};
    if (is_known(was)) {
      const FileIdentity dir_now = directory_identity(absent.path);
      if (!is_known(dir_now) || !same_file(was, dir_now)) add({absent, {}, now, was});
    }
    if (auto identity = file_identity(absent.path)) add({absent, *identity, now, {}});
  }
  return true;
}

Status StackNeighbours::writers_stopped(const std::string& file) {
  auto found = entries_.find(key_of(file));
  if (found == entries_.end() || (is_up_ && is_up_(file))) return {};
  if (!record_planted(found->second)) return {};
  return save();
}

void StackNeighbours::settle_stopped() {
  bool changed = false;
  for (auto& [key, entry] : entries_)
    if (entry.writers_running && !(is_up_ && is_up_(entry.file)))
      changed = record_planted(entry) || changed;
  if (changed) (void)save();  // unsaved, the next check records it again
}

Status StackNeighbours::check_planted_anywhere(const ResolvedStack& stack) {
  auto refusal = [&](const std::string& path, const Entry& entry, const Entry::Planted& planted,
                     const std::string& how) {
    return Error{UV_EPERM, "stack '" + stack.name + "': " + path + " is " + how + " block '" +
                               planted.absent.dir.writer + "' of stack '" + entry.stack +
                               "' could write " + planted.absent.dir.path +
                               ": an up does not read what a block may have written. Read it; "
                               "if it is yours, " +
                               write_anew(path) + " and up again; if not, remove it"};
  };
  for (const auto& path : stack.decisive_files) {
    // The file itself, and what it leads to when it is a link (read through it).
    const std::string real = resolved_path(path);
    std::vector<FileIdentity> names;
    for (const std::string& name : {path, real})
      if (auto identity = file_identity(name); identity && is_known(*identity))
        names.push_back(*identity);
    if (names.empty()) continue;
    for (const auto& [key, entry] : entries_)
      for (const auto& planted : entry.planted)
        if (is_known(planted.identity))
          for (const auto& identity : names)
            if (same_file_elsewhere(planted.identity, identity))
              return refusal(path, entry, planted,
                             "the file that " + planted.absent.path + " was when");
    // In a directory that moved while blocks could write it, under a name they could have
    // made: theirs. The name is tried as given and as the file system resolves it (a link the
    // block made there; a name in another case, where case is not told apart). Each matching
    // record takes this file's identity, so that the file written anew is read.
    std::vector<std::pair<FileIdentity, std::string>> places;
    for (const std::string& name : {path, real})
      if (const FileIdentity dir = directory_identity(name); is_known(dir))
        places.emplace_back(dir, lower_ascii(base_name(name)));
    auto made_here = [&](const Entry::Planted& planted) {
      return std::any_of(places.begin(), places.end(), [&](const auto& place) {
        return place.second == lower_ascii(base_name(planted.absent.path)) &&
               same_file_elsewhere(planted.moved_dir, place.first);
      });
    };
    const Entry* first_entry = nullptr;
    const Entry::Planted* first = nullptr;
    for (auto& [key, entry] : entries_)
      for (auto& planted : entry.planted)
        if (!is_known(planted.identity) && is_known(planted.moved_dir) && made_here(planted)) {
          planted.identity = names.back();
          if (!first) first_entry = &entry, first = &planted;
        }
    if (first) {
      (void)save();  // unsaved, the next check finds it again by its directory
      return refusal(
          path, *first_entry, *first,
          "in the directory that was " + directory_of(first->absent.path) + ", moved while");
    }
  }
  return {};
}

void StackNeighbours::forget_oldest_planted() {
  size_t total = 0;
  for (const auto& [key, entry] : entries_) total += entry.planted.size();
  if (total <= max_planted_) return;
  // Those no longer at their place (gone, moved, or made anew there), oldest first.
  std::vector<std::pair<long long, std::pair<Entry*, size_t>>> movable;
  for (auto& [key, entry] : entries_)
    for (size_t i = 0; i < entry.planted.size(); ++i) {
      const Entry::Planted& planted = entry.planted[i];
      if (!is_known(planted.identity)) {
        // A moved directory's record goes by age like a file no longer at its place (each
        // replaced directory adds one); one that could not be examined stays.
        if (is_known(planted.moved_dir)) movable.push_back({planted.seen_at, {&entry, i}});
        continue;
      }
      auto now = file_identity(planted.absent.path);
      if (!now || !same_file(planted.identity, *now))
        movable.push_back({planted.seen_at, {&entry, i}});
    }
  std::stable_sort(movable.begin(), movable.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t excess = std::min(total - max_planted_, movable.size());
  std::map<Entry*, std::vector<size_t>> forgotten;
  for (size_t i = 0; i < excess; ++i)
    forgotten[movable[i].second.first].push_back(movable[i].second.second);
  for (auto& [entry, indexes] : forgotten) {
    std::sort(indexes.rbegin(), indexes.rend());  // the last first, so the others stay put
    for (size_t index : indexes)
      entry->planted.erase(entry->planted.begin() + static_cast<std::ptrdiff_t>(index));
  }
}

Status StackNeighbours::check(const ResolvedStack& stack) {
  STACKIE_TRY(check_appeared(stack));
  // Stacks not up whose blocks were not seen to stop: what they made, recorded before it is
  // looked for (a file renamed from there into this stack's project).
  settle_stopped();
  STACKIE_TRY(check_planted_anywhere(stack));
  for (const Entry* other : others(stack)) {
    for (const auto& dir : other->writable)
      for (const auto& decisive : stack.decisive_paths)
        if (holds(dir, decisive))
          return Error{UV_EPERM, "stack '" + stack.name + "' is decided by " + decisive + ", in " +
                                     dir.path + ", which block '" + dir.writer + "' of stack '" +
                                     other->stack + "' (" + other->file +
                                     ") can write: it could rewrite how this stack runs or plant "
                                     "links it follows; " +
                                     (directory_of(other->file) == directory_of(stack.file)
                                          ? "two stack files in one project: a block may have "
                                            "made " +
                                                stack.file + "; remove the one you did not write"
                                          : std::string(kAdvice))};
    for (const auto& dir : stack.writable_dirs)
      for (const auto& decisive : other->decisive)
        if (holds(dir, decisive))
          return Error{UV_EPERM, "block '" + dir.writer + "' of stack '" + stack.name +
                                     "' would write " + dir.path + ", which holds " + decisive +
                                     " of stack '" + other->stack + "' (" + other->file +
                                     "): it could rewrite how that stack runs or plant links it "
                                     "follows; " +
                                     kAdvice};
  }
  return {};
}

void StackNeighbours::confine(SandboxPolicy& policy) const {
  std::vector<std::string>& roots = policy.link_free_roots;
  auto holds_a_source = [&](const std::string& dir) {
    for (const auto* binds : {&policy.read_write, &policy.read_only})
      for (const auto& bind : *binds)
        if (auto below = path_below(dir, bind.source); below && !below->empty()) return true;
    return false;
  };
  // At each block's start: the file system is asked (live) only for a record that matters.
  for (const auto& [key, entry] : entries_)
    for (const auto& dir : entry.writable)
      if (!dir.path.empty() && holds_a_source(dir.path) &&
          std::find(roots.begin(), roots.end(), dir.path) == roots.end() && live(entry))
        roots.push_back(dir.path);
}

Status StackNeighbours::remember(const ResolvedStack& stack) {
  // Its blocks may write from now on, until its `down`. What they made before was refused by
  // check() unless it is gone from its place or made anew; gone may be moved, so it is kept.
  const std::string key = key_of(stack.file);
  std::vector<Entry::Planted> planted;
  // One whose file was unreadable at the stop (identity unknown, no moved directory) cannot be
  // followed elsewhere; kept, it would be taken for whatever the user makes at its path later.
  if (auto earlier = entries_.find(key); earlier != entries_.end())
    for (auto& made : earlier->second.planted)
      if (is_known(made.identity) || is_known(made.moved_dir)) planted.push_back(std::move(made));
  std::vector<FileIdentity> absent_dirs;
  for (const auto& absent : stack.absent_decisive)
    absent_dirs.push_back(directory_identity(absent.path));
  entries_[key] = Entry{stack.name,
                        stack.file,
                        stack.writable_dirs,
                        stack.decisive_paths,
                        stack.absent_decisive,
                        std::move(absent_dirs),
                        true,
                        std::move(planted)};
  // Forgotten: stacks whose file is gone (a deleted checkout), but for the files their blocks
  // made (first recorded, if their blocks were not seen to stop).
  for (auto& [name, kept] : entries_)
    if (!live(kept)) record_planted(kept);
  forget_oldest_planted();
  std::erase_if(entries_, [this](const auto& item) {
    return !live(item.second) && item.second.planted.empty();
  });
  return save();
}

Status StackNeighbours::save() const {
  Json all = Json::object();
  for (const auto& [name, kept] : entries_) {
    Json writable = Json::array();
    for (const auto& dir : kept.writable)
      writable.push_back(Json::object({{"path", dir.path}, {"writer", dir.writer}}));
    Json decisive = Json::array();
    for (const auto& path : kept.decisive) decisive.push_back(path);
    Json planted = Json::array();
    for (const auto& made : kept.planted) {
      Json record = identity_json(made.identity);
      record.set("path", made.absent.path);
      record.set("dir", made.absent.dir.path);
      record.set("writer", made.absent.dir.writer);
      record.set("seen_at", std::to_string(made.seen_at));
      if (is_known(made.moved_dir)) record.set("moved_dir", identity_json(made.moved_dir));
      planted.push_back(std::move(record));
    }
    Json absent = Json::array();
    for (size_t i = 0; i < kept.absent.size(); ++i) {
      const AbsentDecisive& path = kept.absent[i];
      Json record =
          Json::object({{"path", path.path}, {"dir", path.dir.path}, {"writer", path.dir.writer}});
      if (i < kept.absent_dirs.size()) record.set("in", identity_json(kept.absent_dirs[i]));
      absent.push_back(std::move(record));
    }
    all.set(name, Json::object({{"stack", kept.stack},
                                {"file", kept.file},
                                {"writable", std::move(writable)},
                                {"decisive", std::move(decisive)},
                                {"absent", std::move(absent)},
                                {"writers_running", kept.writers_running},
                                {"planted", std::move(planted)}}));
  }
  return write_file_atomically(path_, to_json(all) + "\n");
}

}  // namespace stackie
