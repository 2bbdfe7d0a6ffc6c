#include "base/log_level.h"

#include "base/byte_words.h"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stackie {
namespace {

// How far into a line its level is looked for (a timestamp and a logger name come first).
constexpr std::size_t kLevelWindow = 96;
// How far into a JSON line its level field is looked for.
constexpr std::size_t kJsonWindow = 4096;

struct LevelWord {
  std::string_view word;  // lower case
  LogLevel level;
};
constexpr std::array<LevelWord, 19> kLevelWords = {{
    {"fatal", LogLevel::fatal},     {"panic", LogLevel::fatal},     {"emerg", LogLevel::fatal},
    {"emergency", LogLevel::fatal}, {"alert", LogLevel::fatal},     {"error", LogLevel::error},
    {"err", LogLevel::error},       {"critical", LogLevel::error},  {"crit", LogLevel::error},
    {"traceback", LogLevel::error}, {"exception", LogLevel::error}, {"warning", LogLevel::warn},
    {"warn", LogLevel::warn},       {"info", LogLevel::info},       {"notice", LogLevel::info},
    {"log", LogLevel::info},  // postgres's "LOG:"
    {"debug", LogLevel::debug},     {"trace", LogLevel::debug},     {"verbose", LogLevel::debug},
}};

// Words outside these lengths are no level: most words of a line are rejected by length alone.
constexpr std::size_t kShortestWord = 3, kLongestWord = 9;
constexpr bool words_within_lengths() {
  for (const auto& candidate : kLevelWords)
    if (candidate.word.size() < kShortestWord || candidate.word.size() > kLongestWord) return false;
  return true;
}
static_assert(words_within_lengths(), "first_level_word's length check must cover kLevelWords");

// ASCII only, without the C locale's tables: this runs on every byte of the head of every line
// a block writes, on the daemon's one thread (issue 25).
bool is_alpha(char c) {
  const char lower = static_cast<char>(c | 0x20);
  return lower >= 'a' && lower <= 'z';
}
char to_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c | 0x20) : c;
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The letters of a line's head, one bit per byte (bit i for byte i), 128 bits wide: words are
// then found with shifts and bit counts over the whole window at once, instead of a test per
// byte and a branch per word (issue 25: this runs on every line a block writes, and the scan was
// a quarter of the daemon's time per line under a flood).
struct WindowBits {
  uint64_t lo = 0, hi = 0;  // bytes 0-63, 64-127

  // Sets the bits of `bits` from position `at` on.
  void add(uint64_t bits, std::size_t at) {
    if (at >= 64) {
      hi |= bits << (at - 64);
      return;
    }
    lo |= bits << at;
    if (at > 0) hi |= bits >> (64 - at);
  }
  WindowBits down(int n) const { return {(lo >> n) | (hi << (64 - n)), hi >> n}; }  // 0 < n < 64
  WindowBits up(int n) const { return {lo << n, (hi << n) | (lo >> (64 - n))}; }    // 0 < n < 64
  WindowBits operator&(WindowBits o) const { return {lo & o.lo, hi & o.hi}; }
  WindowBits operator~() const { return {~lo, ~hi}; }
  bool empty() const { return (lo | hi) == 0; }
  // How many bits are set in a row from position `at` (below 128) on: the length of the word
  // starting there, read from the bits rather than byte by byte (issue 25).
  std::size_t run_from(std::size_t at) const {
    if (at >= 64) return static_cast<std::size_t>(std::countr_one(hi >> (at - 64)));
    const auto low = static_cast<std::size_t>(std::countr_one(lo >> at));
    return at + low < 64 ? low : low + static_cast<std::size_t>(std::countr_one(hi));
  }
  // The lowest set bit's position, which it clears; the window must not be empty.
  std::size_t take_lowest() {
    if (lo != 0) {
      std::size_t at = static_cast<std::size_t>(std::countr_zero(lo));
      lo &= lo - 1;
      return at;
    }
    std::size_t at = 64 + static_cast<std::size_t>(std::countr_zero(hi));
    hi &= hi - 1;
    return at;
  }
};
static_assert(kLevelWindow <= 128, "WindowBits holds the level window");

#if defined(__SSE2__)
// The letters among the 16 bytes at `at`: (byte | 0x20) - 'a' below 26, compared as signed bytes
// after moving the range to the bottom of the signed scale.
uint64_t letter_bits16(const char* at) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  const __m128i lower = _mm_or_si128(bytes, _mm_set1_epi8(0x20));
  const __m128i moved = _mm_sub_epi8(lower, _mm_set1_epi8(static_cast<char>('a' - 128)));
  const __m128i letters = _mm_cmplt_epi8(moved, _mm_set1_epi8(static_cast<char>(-128 + 26)));
  return static_cast<uint16_t>(_mm_movemask_epi8(letters));
}
#endif

// The usual exact per-byte range tests on the low seven bits of the bytes with 0x20 set (a byte
// with its top bit set is no letter), then the eight top bits gathered by one multiplication:
// its partial products land on distinct bits, so nothing carries.
uint64_t letter_bits8(const char* at) {
  using namespace byte_words;
  static_assert(std::endian::native == std::endian::little, "bit i is the byte at offset i");
  const uint64_t word = load8(at);
  const uint64_t low7 = (word | (kOnes * 0x20)) & ~kHigh;
  const uint64_t at_least_a = low7 + kOnes * (0x80 - 'a');
  const uint64_t above_z = low7 + kOnes * (0x7f - 'z');
  const uint64_t letters = at_least_a & ~above_z & ~word & kHigh;
  return ((letters >> 7) * 0x0102040810204080ull) >> 56;
}

WindowBits letters_of(std::string_view head) {
  WindowBits letters;
  std::size_t i = 0;
#if defined(__SSE2__)
  static_assert(kLevelWindow == 96, "the whole window below is six chunks of 16 bytes");
  if (head.size() == kLevelWindow) {  // most lines of a flood: no branch per chunk
    const char* at = head.data();
    letters.lo = letter_bits16(at) | letter_bits16(at + 16) << 16 | letter_bits16(at + 32) << 32 |
                 letter_bits16(at + 48) << 48;
    letters.hi = letter_bits16(at + 64) | letter_bits16(at + 80) << 16;
    return letters;
  }
  for (; i + 16 <= head.size(); i += 16) letters.add(letter_bits16(head.data() + i), i);
  // The last bytes as the 16 that end the head: the bits they share with the chunk before are
  // the same.
  if (i < head.size() && head.size() >= 16) {
    letters.add(letter_bits16(head.data() + head.size() - 16), head.size() - 16);
    i = head.size();
  }
#endif
  for (; i + 8 <= head.size(); i += 8) letters.add(letter_bits8(head.data() + i), i);
  for (; i < head.size(); ++i)
    if (is_alpha(head[i])) letters.add(1, i);
  return letters;
}

bool same_word(std::string_view text, std::string_view lower_word) {
  if (text.size() != lower_word.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (to_lower(text[i]) != lower_word[i]) return false;
  return true;
}

// For each byte, the lengths of the level words that start with it in either case, one bit per
// length: most words of a line ("bench", "line") are rejected by their first byte and their
// length, before the word list and without lowering a letter (issue 25: this runs on every line).
constexpr std::array<uint16_t, 256> lengths_by_first_byte() {
  std::array<uint16_t, 256> lengths{};
  for (const auto& candidate : kLevelWords) {
    const auto length = static_cast<uint16_t>(1u << candidate.word.size());
    const auto lower = static_cast<unsigned char>(candidate.word[0]);
    lengths[lower] |= length;
    lengths[lower - ('a' - 'A')] |= length;
  }
  return lengths;
}
constexpr std::array<uint16_t, 256> kLengthsByFirstByte = lengths_by_first_byte();

// The level `word` names; first_level_word has checked its first byte and length.
std::optional<LogLevel> level_of_word(std::string_view word) {
  for (const auto& candidate : kLevelWords)
    if (same_word(word, candidate.word)) return candidate.level;
  return std::nullopt;
}

// "log" is a level only as postgres writes it, "LOG:" in capitals; in prose it is a noun.
bool plausible(std::string_view word, char next) {
  if (same_word(word, "log")) return word == "LOG" && next == ':';
  return true;
}

// The first level word among the words of the head. Only words of at least kShortestWord
// letters are candidates, picked out of the letter bits at once (a word of at least three letters
// has three bits set from its first); each is then rejected by its first byte, most often, or by
// its length read from the bits, before it is compared with a level word. Words that are too
// long need no bits of their own: their length rejects them (issue 25: shifting the whole window
// to find them cost more than the few candidates it removed).
LogLevel first_level_word(std::string_view text) {
  std::string_view head = text.substr(0, kLevelWindow);
  const WindowBits letters = letters_of(head);
  static_assert(kShortestWord == 3, "the runs below");
  const WindowBits first_letters = letters & ~letters.up(1);
  WindowBits candidates = first_letters & letters.down(1) & letters.down(2);
  while (!candidates.empty()) {
    const std::size_t start = candidates.take_lowest();
    const unsigned lengths = kLengthsByFirstByte[static_cast<unsigned char>(head[start])];
    if (lengths == 0) continue;
    const std::size_t length = letters.run_from(start);  // the letters end within the head
    if (length > kLongestWord || ((lengths >> length) & 1u) == 0) continue;
    std::string_view word = head.substr(start, length);
    const std::size_t end = start + length;
    char next = end < head.size() ? head[end] : '\0';
    if (auto level = level_of_word(word); level && plausible(word, next)) return *level;
  }
  return LogLevel::unknown;
}

// redis: "PID:ROLE DD Mon YYYY HH:MM:SS.mmm C message", C one of . - * #
std::optional<LogLevel> redis_level(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  if (i == 0 || i + 3 > text.size() || text[i] != ':' || !is_alpha(text[i + 1]) ||
      text[i + 2] != ' ')
    return std::nullopt;
  // The marker follows the time, which ends in ".mmm ".
  std::size_t dot = text.find('.', i + 3);
  if (dot == std::string_view::npos || dot > i + 3 + 32) return std::nullopt;
  std::size_t marker = dot + 5;
  if (marker + 1 >= text.size() || text[marker - 1] != ' ' || text[marker + 1] != ' ')
    return std::nullopt;
  switch (text[marker]) {
    case '.': return LogLevel::debug;
    case '-':
    case '*': return LogLevel::info;
    case '#': return LogLevel::warn;
    default: return std::nullopt;
  }
}

// The value of "level", "severity", "lvl" or "levelname" in a JSON object line, read without
// parsing the whole line: a string names a level, a number is pino's and bunyan's scale.
std::optional<LogLevel> json_level(std::string_view text) {
  std::string_view head = text.substr(0, kJsonWindow);
  for (std::string_view key : {"\"level\"", "\"severity\"", "\"lvl\"", "\"levelname\""}) {
    std::size_t at = head.find(key);
    if (at == std::string_view::npos) continue;
    std::size_t i = at + key.size();
    while (i < head.size() && (head[i] == ' ' || head[i] == ':')) ++i;
    if (i >= head.size()) return std::nullopt;
    if (head[i] == '"') {
      std::size_t end = head.find('"', i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      return parse_log_level(head.substr(i + 1, end - i - 1))
          .value_or(first_level_word(head.substr(i + 1, end - i - 1)));
    }
    int number = 0;
    std::size_t digits = 0;
    for (; i < head.size() && is_digit(head[i]) && digits < 3; ++i, ++digits)
      number = number * 10 + (head[i] - '0');
    if (digits == 0) return std::nullopt;
    if (number >= 60) return LogLevel::fatal;
    if (number >= 50) return LogLevel::error;
    if (number >= 40) return LogLevel::warn;
    if (number >= 30) return LogLevel::info;
    return LogLevel::debug;
  }
  return std::nullopt;
}

}  // namespace

LogLevel classify_log_line(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size() && (text[start] == ' ' || text[start] == '\t')) ++start;
  if (start < text.size() && text[start] == '{')
    if (auto level = json_level(text.substr(start))) return *level;
  if (auto level = redis_level(text)) return *level;
  return first_level_word(text);
}

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (same_word(name, "debug") || same_word(name, "trace")) return LogLevel::debug;
  if (same_word(name, "info")) return LogLevel::info;
  if (same_word(name, "warn") || same_word(name, "warning")) return LogLevel::warn;
  if (same_word(name, "error")) return LogLevel::error;
  if (same_word(name, "fatal")) return LogLevel::fatal;
  return std::nullopt;
}

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::fatal: return "fatal";
    case LogLevel::unknown: break;
  }
  return "";
}

}  // namespace stackie
