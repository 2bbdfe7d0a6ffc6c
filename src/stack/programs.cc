#include "stack/programs.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "stack/programs_os.h"

namespace stackie {

bool version_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i_end = i, j_end = j;
      while (i_end < a.size() && std::isdigit(static_cast<unsigned char>(a[i_end]))) ++i_end;
      while (j_end < b.size() && std::isdigit(static_cast<unsigned char>(b[j_end]))) ++j_end;
      std::string_view x(a.data() + i, i_end - i), y(b.data() + j, j_end - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i_end;
      j = j_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> usual_program_dirs(const std::string& os) {
  if (os == "macos")  // Apple silicon Homebrew, Intel Homebrew, MacPorts, then the system
    return {"/opt/homebrew/bin", "/usr/local/bin", "/opt/local/bin", "/usr/bin", "/bin"};
  if (os == "windows") return {};  // no common bin directory: blocks name their own
  // Linux: the system, then Homebrew on Linux (its default prefix) and Nix profiles.
  return {"/usr/local/bin", "/usr/bin", "/bin", "/home/linuxbrew/.linuxbrew/bin",
          "/run/current-system/sw/bin"};
}

std::vector<std::string> globs_for_os(const std::vector<std::string>& globs,
                                      const std::string& os) {
  std::vector<std::string> out;
  for (const auto& glob : globs) {
    bool drive = glob.size() >= 3 && std::isalpha(static_cast<unsigned char>(glob[0])) &&
                 glob[1] == ':' && (glob[2] == '/' || glob[2] == '\\');
    if (os == "windows" ? drive : !glob.empty() && glob[0] == '/') out.push_back(glob);
  }
  return out;
}

std::vector<std::string> split_search_path(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(search_path_separator(), start);
    if (end == std::string::npos) end = value.size();
    if (end > start) out.push_back(value.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

namespace {

// What the one '*' of `pattern` matched in `path` ("" for a pattern without one).
std::string glob_capture(const std::string& pattern, const std::string& path) {
  size_t star = pattern.find('*');
  if (star == std::string::npos || pattern.find('*', star + 1) != std::string::npos) return "";
  size_t suffix = pattern.size() - star - 1;
  if (path.size() < star + suffix) return "";
  return path.substr(star, path.size() - star - suffix);
}

}  // namespace

bool version_matches(const std::string& found, const std::string& wanted) {
  // Digits in `found` start where the version does: "postgresql15" (MacPorts) is 15.
  size_t digits = found.find_first_of("0123456789");
  if (digits == std::string::npos) return false;
  std::string version = found.substr(digits);
  return version == wanted ||
         (version.size() > wanted.size() && version.compare(0, wanted.size(), wanted) == 0 &&
          version[wanted.size()] == '.');
}

std::vector<std::string> installed_versions(const ProgramSearch& search) {
  std::vector<std::string> out;
  for (const auto& pattern : search.globs)
    for (const auto& dir : expand_glob(search.root + pattern)) {
      std::string version = glob_capture(search.root + pattern, dir);
      size_t digits = version.find_first_of("0123456789");
      if (digits == std::string::npos) continue;
      version = version.substr(digits);
      bool has = std::any_of(search.names.begin(), search.names.end(), [&](const auto& name) {
        return is_executable_file(dir + "/" + name);
      });
      if (has && std::find(out.begin(), out.end(), version) == out.end()) out.push_back(version);
    }
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return version_less(b, a); });
  return out;
}

FoundProgram find_program(const ProgramSearch& search, const std::string& version) {
  std::vector<std::string> dirs;
  for (const auto& pattern : search.globs)
    for (auto& dir : expand_glob(search.root + pattern))
      if (version.empty() || version_matches(glob_capture(search.root + pattern, dir), version))
        dirs.push_back(std::move(dir));
  if (version.empty()) {
    for (const auto& dir : search.path)
      if (is_absolute_path(dir)) dirs.push_back(dir);
    for (const auto& dir : search.usual) dirs.push_back(search.root + dir);
  }
  for (const auto& dir : dirs)
    for (const auto& name : search.names) {
      std::string candidate = dir + "/" + name;
      if (!is_executable_file(candidate)) continue;
      auto dir_of = [](const std::string& path) {
        size_t slash = path.rfind('/');
        return path.substr(0, slash == 0 ? 1 : slash);
      };
      FoundProgram found;
      found.path = candidate;
      found.dir = dir_of(candidate);
      found.real_dir = dir_of(real_path(candidate));
      return found;
    }
  return {};
}

std::string install_hint(const std::map<std::string, std::string>& packages,
                         const std::string& os) {
  auto pick = [&](const char* manager, const char* command) -> std::string {
    auto found = packages.find(manager);
    return found == packages.end() ? "" : std::string(command) + found->second;
  };
  if (os == "macos") return pick("brew", "brew install ");
  if (os == "windows") return pick("winget", "winget install ");
  return pick("apt", "apt-get install ");
}

}  // namespace stackie
