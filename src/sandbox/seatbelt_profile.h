// Policy -> macOS Seatbelt (SBPL) profile text (DESIGN.md §5b). Pure code: it builds and is
// unit-tested on every OS; only seatbelt_apply_macos.cc hands the text to the kernel.
#pragma once

#include <string>
#include <string_view>

#include "policy/policy.h"

namespace stackie {

// The SBPL profile for `policy`: `(version 1) (deny default)` first, then only allow rules.
// Host paths are used (`BindMount::source`): Seatbelt filters paths, it cannot remap them, so a
// bind's `dest` has no meaning on macOS. A path that is not absolute or holds a NUL byte is left
// out (never widened to a prefix); validate() rejects such policies before this runs.
std::string seatbelt_profile(const SandboxPolicy& policy);

// The prefix of the POSIX shared memory and semaphore names a block may use: "s" + 13 base32
// characters (65 bits of SHA-256) of its sandbox name + "." (e.g.
// shm_open("/sabcdefgh2345m.cache")). Short because macOS caps those names at 31 bytes, 15 of which
// are left to the block; the block gets it as $STACKIE_IPC_PREFIX (seatbelt apply).
std::string seatbelt_ipc_prefix(std::string_view sandbox_name);

// `text` as an SBPL (TinyScheme) string literal, quotes included. `"` and `\` are escaped, every
// byte outside printable ASCII (controls, DEL, non-ASCII UTF-8) becomes `\xHH`, so no byte of a
// path is ever pasted raw into the profile.
std::string sbpl_string_literal(std::string_view text);

}  // namespace stackie
