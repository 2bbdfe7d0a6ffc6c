// Linked into stackie-lockbox only in ASan builds (src/meson.build; scripts/test --sanitize).
// The lockbox keeps AddressSanitizer and UBSan there, but not LeakSanitizer: its processes run
// in a fresh user and pid namespace, and the --join helper and the block's child under the
// seccomp filter, which refuses ptrace. LSan stops the process with ptrace at exit; it would
// fail there and turn every exit status into 1. (The launcher's memory is reclaimed by execve or
// exit anyway; leaks matter in the long-running daemon, which keeps LSan.)
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() {
  return "detect_leaks=0";
}
