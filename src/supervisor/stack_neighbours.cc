#include "supervisor/stack_neighbours.h"

#include <uv.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

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

const char kAdvice[] =
    "give each stack a project directory of its own (a block's `path` or volume that holds "
    "another project is the cause)";

}  // namespace

StackNeighbours::StackNeighbours(std::string path) : path_(std::move(path)) {
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
      for (const auto& absent : value["absent"].as_array())
        entry.absent.push_back({absent["path"].string_or(""),
                                {absent["dir"].string_or(""), absent["writer"].string_or("")}});
    // Missing in a record of an earlier release: its blocks may have run, so the absent paths
    // that exist at the next stop or check are taken as theirs (at worst, one refusal more).
    entry.writers_running = value["writers_running"].bool_or(true);
    if (value["planted"].is_array())
      for (const auto& planted : value["planted"].as_array()) {
        // Decimal strings: a device and an index may exceed what a JSON number keeps exactly.
        FileIdentity identity{std::strtoull(planted["device"].string_or("0").c_str(), nullptr, 10),
                              std::strtoull(planted["index"].string_or("0").c_str(), nullptr, 10),
                              planted["handle"].string_or("")};
        entry.planted.push_back({{planted["path"].string_or(""),
                                  {planted["dir"].string_or(""), planted["writer"].string_or("")}},
                                 identity});
      }
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
  auto anew = [](const std::string& path) {
    return "write it anew (cp " + path + " " + path + ".new && mv " + path + ".new " + path + ")";
  };
  if (entry.writers_running)  // up: who made it cannot be told
    for (const auto& absent : entry.absent)
      if (file_identity(absent.path))
        return refusal(absent, "`stackie down " + stack.name +
                                   "` first; then read it, and if it is yours, " +
                                   anew(absent.path) + " and up again; if not, remove it");
  for (auto& planted : entry.planted) {
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
    return refusal(planted.absent, "Read it; if it is yours, " + anew(planted.absent.path) +
                                       " and up again; if not, remove it");
  }
  return {};
}

bool StackNeighbours::record_planted(Entry& entry) {
  if (!entry.writers_running) return false;
  entry.writers_running = false;
  for (const auto& absent : entry.absent)
    if (auto identity = file_identity(absent.path)) {
      auto same = [&](const Entry::Planted& p) { return p.absent.path == absent.path; };
      if (std::none_of(entry.planted.begin(), entry.planted.end(), same))
        entry.planted.push_back({absent, *identity});
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
    if (!(is_up_ && is_up_(entry.file))) changed = record_planted(entry) || changed;
  if (changed) (void)save();  // unsaved, the next check records it again
}

Status StackNeighbours::check(const ResolvedStack& stack) {
  STACKIE_TRY(check_appeared(stack));
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
  // check() unless it is gone or made anew: nothing planted is left to remember.
  Entry entry{
      stack.name, stack.file, stack.writable_dirs, stack.decisive_paths, stack.absent_decisive,
      true,       {}};
  const std::string key = key_of(stack.file);
  entries_[key] = std::move(entry);
  // Forgotten: stacks whose file is gone (a deleted checkout).
  std::erase_if(entries_, [this](const auto& item) { return !live(item.second); });
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
    for (const auto& made : kept.planted)
      planted.push_back(Json::object({{"path", made.absent.path},
                                      {"dir", made.absent.dir.path},
                                      {"writer", made.absent.dir.writer},
                                      {"device", std::to_string(made.identity.device)},
                                      {"index", std::to_string(made.identity.index)},
                                      {"handle", made.identity.handle}}));
    Json absent = Json::array();
    for (const auto& path : kept.absent)
      absent.push_back(
          Json::object({{"path", path.path}, {"dir", path.dir.path}, {"writer", path.dir.writer}}));
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
