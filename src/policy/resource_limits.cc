#include "policy/resource_limits.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace stackie {
namespace {

struct Unit {
  std::string_view name;
  uint64_t factor;
};

// Longest names first is not needed: the whole suffix must match one entry exactly.
constexpr Unit kUnits[] = {
    {"", 1},
    {"B", 1},
    {"K", 1ull << 10},
    {"KiB", 1ull << 10},
    {"M", 1ull << 20},
    {"MiB", 1ull << 20},
    {"G", 1ull << 30},
    {"GiB", 1ull << 30},
    {"T", 1ull << 40},
    {"TiB", 1ull << 40},
    {"kB", 1000},
    {"KB", 1000},
    {"MB", 1000000},
    {"GB", 1000000000},
    {"TB", 1000000000000ull},
};

Error size_error(std::string_view text) {
  return Error{0, "'" + std::string(text) +
                      "' is not a size (a number with an optional unit: 512MiB, 2GiB, 1.5G, "
                      "64M, 100MB, or bytes)"};
}

// A non-negative decimal "INT[.FRACTION]" read as integers (no binary floating point: 1.001
// CPUs must be exactly 1001 millis); `rest` gets what follows.
struct Decimal {
  uint64_t whole = 0;
  std::string_view fraction;  // the digits after '.', maybe empty
};

bool read_decimal(std::string_view text, Decimal* out, std::string_view* rest) {
  size_t end = 0;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  if (end == 0 || end > 18) return false;  // 18 digits cannot overflow uint64
  std::from_chars(text.data(), text.data() + end, out->whole);
  out->fraction = {};
  if (end < text.size() && text[end] == '.') {
    size_t start = ++end;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == start) return false;  // "1." or "1.MiB"
    out->fraction = text.substr(start, end - start);
  }
  *rest = text.substr(end);
  return true;
}

// whole.fraction x factor, rounded down; false when it does not fit in 62 bits. Six fraction
// digits at most count (1e6 x 2^40 still fits in 64 bits): finer than a byte of any unit here.
bool scale(const Decimal& number, uint64_t factor, uint64_t* out) {
  constexpr uint64_t kMax = 1ull << 62;
  if (number.whole > kMax / factor) return false;
  uint64_t numerator = 0, denominator = 1;
  for (char digit : number.fraction.substr(0, 6)) {
    numerator = numerator * 10 + static_cast<uint64_t>(digit - '0');
    denominator *= 10;
  }
  uint64_t value = number.whole * factor + numerator * factor / denominator;
  if (value >= kMax) return false;
  *out = value;
  return true;
}

}  // namespace

ResourceLimits default_limits() {
  ResourceLimits limits;
  limits.memory_bytes = kDefaultMemoryBytes;
  limits.pids = kDefaultPids;
  limits.shm_bytes = default_shm_bytes(limits.memory_bytes);
  return limits;
}

Status check_limits(const ResourceLimits& limits) {
  if (limits.memory_bytes != 0 && limits.memory_bytes < kMinMemoryBytes)
    return Error{0, "memory limit " + format_byte_size(limits.memory_bytes) +
                        " is below the minimum " + format_byte_size(kMinMemoryBytes)};
  if (limits.pids != 0 && limits.pids < kMinPids)
    return Error{0, "pids limit " + std::to_string(limits.pids) + " is below the minimum " +
                        std::to_string(kMinPids) + " (the sandbox's monitor and init count)"};
  if (limits.pids < 0 || limits.cpu_millis < 0) return Error{0, "negative limit"};
  if (limits.shm_bytes != 0 && limits.shm_bytes < kMinShmBytes)
    return Error{0, "shm size " + format_byte_size(limits.shm_bytes) + " is below the minimum " +
                        format_byte_size(kMinShmBytes)};
  return {};
}

uint64_t default_shm_bytes(uint64_t memory_bytes) {
  if (memory_bytes == 0) return kMaxDefaultShmBytes;
  return std::min(memory_bytes, kMaxDefaultShmBytes);
}

Result<uint64_t> parse_byte_size(std::string_view text) {
  Decimal number;
  std::string_view unit;
  if (!read_decimal(text, &number, &unit)) return size_error(text);
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);  // "512 MiB"
  for (const Unit& candidate : kUnits) {
    if (unit != candidate.name) continue;
    if (!number.fraction.empty() && candidate.factor == 1)
      return Error{0, "'" + std::string(text) + "': a number of bytes has no fraction"};
    uint64_t bytes = 0;
    if (!scale(number, candidate.factor, &bytes))
      return Error{0, "'" + std::string(text) + "' is too large"};
    return bytes;
  }
  return size_error(text);
}

Result<int> parse_cpu_millis(std::string_view text) {
  Decimal number;
  std::string_view rest;
  Error error{0, "'" + std::string(text) + "' is not a number of CPUs (like 1, 1.5 or 0.25)"};
  if (!read_decimal(text, &number, &rest) || !rest.empty()) return error;
  if (number.fraction.find_first_not_of('0', 3) != std::string_view::npos)
    return Error{0, "'" + std::string(text) + "': at most three decimals (0.001 CPU)"};
  if (number.whole > 1000) return Error{0, "'" + std::string(text) + "' CPUs is too many"};
  uint64_t millis = 0;
  scale(number, 1000, &millis);
  if (millis < 1) return Error{0, "'" + std::string(text) + "': a CPU limit must be above 0"};
  return static_cast<int>(millis);
}

std::string format_byte_size(uint64_t bytes) {
  if (bytes == 0) return "unlimited";
  constexpr std::pair<uint64_t, const char*> units[] = {
      {1ull << 40, "TiB"}, {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& [factor, name] : units) {
    if (bytes >= factor && bytes % factor == 0) return std::to_string(bytes / factor) + name;
  }
  for (const auto& [factor, name] : units) {
    if (bytes >= factor) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f%s", static_cast<double>(bytes) / factor, name);
      return text;
    }
  }
  return std::to_string(bytes) + "B";
}

std::string format_cpu_millis(int millis) {
  if (millis == 0) return "unlimited";
  std::string text = std::to_string(millis / 1000);
  int fraction = millis % 1000;
  if (fraction != 0) {
    char digits[8];
    std::snprintf(digits, sizeof digits, ".%03d", fraction);
    std::string tail = digits;
    while (tail.back() == '0') tail.pop_back();
    text += tail;
  }
  return text;
}

std::string describe_limits(const ResourceLimits& limits) {
  uint64_t shm = limits.shm_bytes ? limits.shm_bytes : default_shm_bytes(limits.memory_bytes);
  return "memory " + format_byte_size(limits.memory_bytes) + ", pids " +
         (limits.pids ? std::to_string(limits.pids) : std::string("unlimited")) + ", cpu " +
         format_cpu_millis(limits.cpu_millis) + ", shm " + format_byte_size(shm);
}

}  // namespace stackie
