#include "base/cgroup_v2.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

namespace stackie {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace

bool DelegatedCgroup::has(std::string_view controller) const {
  return std::find(controllers.begin(), controllers.end(), controller) != controllers.end();
}

std::string cgroup_v2_path(std::string_view proc_cgroup) {
  size_t start = 0;
  while (start < proc_cgroup.size()) {
    size_t end = proc_cgroup.find('\n', start);
    if (end == std::string_view::npos) end = proc_cgroup.size();
    std::string_view line = proc_cgroup.substr(start, end - start);
    if (line.rfind("0::", 0) == 0) return std::string(line.substr(3));
    start = end + 1;
  }
  return "";
}

std::string cgroup2_mount_point(std::string_view mountinfo) {
  std::istringstream in{std::string(mountinfo)};
  for (std::string line; std::getline(in, line);) {
    // ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTIONS
    std::vector<std::string> fields = words(line);
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || dash + 1 == fields.end()) continue;
    // Only a mount of the hierarchy's root maps "0::PATH" to MOUNT-POINT + PATH.
    if (*(dash + 1) == "cgroup2" && fields[3] == "/") return fields[4];
  }
  return "";
}

Result<DelegatedCgroup> find_delegated_cgroup() {
  std::string path = cgroup_v2_path(read_text("/proc/self/cgroup"));
  if (path.empty()) return Error{0, "no cgroup v2 hierarchy (/proc/self/cgroup has no 0:: line)"};
  std::string mount = cgroup2_mount_point(read_text("/proc/self/mountinfo"));
  if (mount.empty()) return Error{0, "no cgroup2 filesystem mounted"};
  if (path == "/")
    return Error{0, "in the root cgroup of " + mount + ", which is not delegated to this user"};
  DelegatedCgroup cgroup;
  cgroup.dir = mount + path;
  struct stat info {};
  if (::stat(cgroup.dir.c_str(), &info) != 0) return system_error(errno, "cgroup " + cgroup.dir);
  if (info.st_uid != ::geteuid() || ::access((cgroup.dir + "/cgroup.procs").c_str(), W_OK) != 0 ||
      ::access((cgroup.dir + "/cgroup.subtree_control").c_str(), W_OK) != 0)
    return Error{0, "cgroup " + cgroup.dir +
                        " is not delegated to this user (a systemd unit with Delegate=yes)"};
  cgroup.controllers = words(read_text(cgroup.dir + "/cgroup.controllers"));
  for (const char* needed : {"pids", "memory"}) {
    if (cgroup.has(needed)) continue;
    std::string available;
    for (const auto& name : cgroup.controllers) available += (available.empty() ? "" : " ") + name;
    return Error{0, "cgroup " + cgroup.dir + " has no " + needed +
                        " controller (Delegate=yes delegates it; available: " +
                        (available.empty() ? "none" : available) + ")"};
  }
  return cgroup;
}

}  // namespace stackie
