// Per-block resource limits (stackie-stack.yml(5) `limits:`): what a block may use of the host.
// The loader fills them (defaults below), the policy carries them to the lockbox, and each
// enforcement applies what it can: a cgroup v2 subtree when the user has one delegated (every
// field), else rlimits and a sized /dev/shm (stackie-lockbox(1) says what that leaves open).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"

namespace stackie {

struct ResourceLimits {
  // 0 means "no limit" (but see shm_bytes).
  uint64_t memory_bytes = 0;  // memory.max; fallback RLIMIT_DATA per process (memory_given)
  int pids = 0;               // pids.max; fallback RLIMIT_NPROC in the block's user namespace
  int cpu_millis = 0;         // CPUs x 1000 (1.5 -> 1500): cpu.max; no fallback
  // The size of the sandbox's /dev/shm (a tmpfs; also of a fresh /tmp tmpfs). Here 0 means
  // default_shm_bytes(memory_bytes), never half of RAM.
  uint64_t shm_bytes = 0;
  // memory_bytes was given (a stack, a definition, --memory), not the default. Only then does
  // the rlimit fallback set RLIMIT_DATA: sanitizer-built programs (ASan reserves ~15 TiB of
  // private writable address space for its shadow) cannot start under any RLIMIT_DATA, and a
  // default must not break them. A cgroup's memory.max counts what is used, and always applies.
  bool memory_given = false;
  bool operator==(const ResourceLimits&) const = default;
};

// The defaults a block gets for a field it does not set: enough for postgres, a JVM or a
// compiler, small enough that a runaway block leaves the host usable.
inline constexpr uint64_t kDefaultMemoryBytes = 2ull << 30;  // 2 GiB
inline constexpr int kDefaultPids = 1024;
inline constexpr uint64_t kMaxDefaultShmBytes = 64ull << 20;  // 64 MiB (or memory, if less)
ResourceLimits default_limits();

// Below these a sandbox cannot even start: its monitor and init are two of the pids, and the
// lockbox itself needs a few MiB before the block runs.
inline constexpr int kMinPids = 4;
inline constexpr uint64_t kMinMemoryBytes = 16ull << 20;  // 16 MiB
inline constexpr uint64_t kMinShmBytes = 1ull << 20;      // 1 MiB

// The checks above, as "memory limit 1MiB is below the minimum 16MiB".
Status check_limits(const ResourceLimits& limits);

// /dev/shm's size when `shm` is not given: min(memory, 64 MiB); 64 MiB without a memory limit.
uint64_t default_shm_bytes(uint64_t memory_bytes);

// "512MiB", "2GiB", "1.5G", "64M", "1048576" (bytes) -> bytes. Binary (KiB MiB GiB TiB, also
// K M G T) and decimal (kB MB GB TB) units; B optional. Errors name the text and the forms.
Result<uint64_t> parse_byte_size(std::string_view text);
// "1.5" -> 1500, "2" -> 2000, "0.25" -> 250: CPUs with at most three decimals, > 0.
Result<int> parse_cpu_millis(std::string_view text);

// The forms a user reads back: "512MiB", "2GiB", "1.5" CPUs; "unlimited" for 0.
std::string format_byte_size(uint64_t bytes);
std::string format_cpu_millis(int millis);
// "memory 2GiB, pids 1024, cpu unlimited, shm 64MiB" (validate, status).
std::string describe_limits(const ResourceLimits& limits);

}  // namespace stackie
