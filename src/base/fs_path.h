// Path strings, and where an installed binary finds its own files. Pure string work except
// executable_path(), one file per platform (fs_path_proc.cc, fs_path_macos.cc,
// fs_path_windows.cc). Paths are kept with '/' separators everywhere; a Windows absolute path is
// "C:/...".
#pragma once

#include <string>

namespace stackie {

// The running executable, and its directory (empty when unknown).
std::string executable_path();
std::string executable_dir();
// The running program's absolute path, or "" when unknown. One file per platform:
// executable_path_linux.cc (/proc/self/exe), executable_path_macos.cc (_NSGetExecutablePath).
std::string executable_path();

// "/..." or, Windows' form, "C:/..." (or "C:\\...").
bool is_absolute_path(const std::string& path);
// A path this OS's calls take as absolute: "/..." on POSIX; on Windows also "C:/..." (and
// "C:\\..."). A stack file's "C:/data" on Linux is a relative name, as the kernel sees it.
// One file per platform (fs_path_proc.cc, fs_path_macos.cc, fs_path_windows.cc).
bool is_host_absolute_path(const std::string& path);
// "C:" at the start.
bool has_drive_prefix(const std::string& path);

// The install prefix an installed binary runs from: `exe_dir` without its trailing `bindir`
// (Meson's bindir option, relative to the prefix: "bin"). Empty when `exe_dir` does not end in
// it (a build tree) or `bindir` is absolute. An installed tree moved elsewhere, or staged under
// DESTDIR, finds its own libexec and share through it rather than the configured prefix.
std::string relocated_prefix(const std::string& exe_dir, const std::string& bindir);
// `relocated_prefix(executable_dir(), STACKIE_INSTALL_BINDIR) / dir`, empty when there is none
// or `dir` is absolute; `dir` is relative to the prefix (e.g. "libexec/stackie").
std::string relocated_install_dir(const std::string& dir);

// Joins "a" and "b" with exactly one '/'.
std::string join_path(const std::string& a, const std::string& b);
// The directory of the file `path` ("/a/b" -> "/a", "/a" -> "/"; "/" when it has no '/').
std::string directory_of(const std::string& path);
// The last component of `path` ("/a/b" -> "b"; `path` itself when it has no '/').
std::string base_name(const std::string& path);
// Lexically normalised absolute path: no ".", "..", "//" or trailing '/' (a drive prefix
// such as "C:" is kept).
std::string normalize_path(const std::string& absolute);

}  // namespace stackie
