// Log severity from the lines real services write (base/log_level.h).
#include "base/log_level.h"

#include <gtest/gtest.h>

#include <string>

namespace stackie {
namespace {

struct Case {
  const char* line;
  LogLevel level;
};

void expect_all(std::initializer_list<Case> cases) {
  for (const Case& c : cases)
    EXPECT_EQ(to_string(classify_log_line(c.line)), to_string(c.level)) << c.line;
}

// Runs of letters are crossed eight bytes at a time (issue 25): a byte next to the letters in
// ASCII ('@', '[', '`', '{') or outside it still ends a word, wherever it falls in the word.
TEST(LogLevel, AWordEndsAtTheFirstByteThatIsNoLetterWhereverItFalls) {
  for (char separator : {'@', '[', '`', '{', ' ', ':', '0', '\xc1', '\xda'}) {
    for (size_t run = 0; run < 40; ++run) {
      std::string line = std::string(run, 'q') + separator + "warn" + separator + " tail";
      EXPECT_EQ(classify_log_line(line), LogLevel::warn) << run << " " << int(separator);
      // The same letters glued to the level word make a longer word, which names no level.
      std::string glued = std::string(run, 'q') + "warn" + separator + " tail";
      EXPECT_EQ(classify_log_line(glued), run == 0 ? LogLevel::warn : LogLevel::unknown) << run;
    }
  }
}

// Words are picked out of a bit per byte of the line's first 96 bytes (issue 25): a word of 2,
// 3, 9 or 10 letters anywhere in the window, or cut by its end, is a word exactly as the bytes
// say. The level word is set after a filler word of the same length, which must not match.
TEST(LogLevel, WordsOfEveryLengthAtEveryOffsetOfTheWindow) {
  const std::pair<std::string, LogLevel> levels[] = {
      {"err", LogLevel::error}, {"WARN", LogLevel::warn}, {"exception", LogLevel::error}};
  for (const auto& [word, level] : levels) {
    for (size_t offset = 0; offset + word.size() <= 130; ++offset) {
      std::string line = std::string(offset, '.') + word + " tail";
      LogLevel expected = offset + word.size() <= 96 ? level : LogLevel::unknown;
      EXPECT_EQ(classify_log_line(line), expected) << word << " at " << offset;
      // Cut by the window's end, a longer word is only its first letters.
      std::string longer = std::string(offset, '.') + word + "zzzz";
      EXPECT_EQ(classify_log_line(longer), offset + word.size() == 96 ? level : LogLevel::unknown)
          << word << "zzzz at " << offset;
      // Ten letters and two are no level word, wherever they are (a cut "errorerror" would be).
      if (offset + 10 > 96) continue;
      std::string others = std::string(offset, '-') + "errorerror xy " + word;
      EXPECT_EQ(classify_log_line(others),
                offset + 14 + word.size() <= 96 ? level : LogLevel::unknown)
          << offset;
    }
  }
}

// A word longer than every level word is rejected by its length as it is read from the letter
// bits (issue 25), however long it is and wherever it starts: one that begins as a level word
// ("warnings", "errorerror...") names none, and the level word after it still counts.
TEST(LogLevel, WordsLongerThanAnyLevelWordNameNoneWhateverTheirStart) {
  for (const std::string start : {"warn", "ERROR", "exception", "Log", "x"}) {
    for (size_t length = start.size() + 1; length <= 100; ++length) {
      const std::string word = start + std::string(length - start.size(), 's');
      EXPECT_EQ(classify_log_line(word), LogLevel::unknown) << word;
      const std::string then = word + " fatal";
      EXPECT_EQ(classify_log_line(then), length + 6 <= 96 ? LogLevel::fatal : LogLevel::unknown)
          << then;
    }
  }
}

TEST(LogLevel, Postgres) {
  expect_all({
      {"2026-12-02 10:00:00.123 UTC [41] LOG:  database system is ready to accept connections",
       LogLevel::info},
      {"2026-12-02 10:00:01.000 UTC [52] FATAL:  password authentication failed for user \"app\"",
       LogLevel::fatal},
      {"2026-12-02 10:00:02.000 UTC [53] ERROR:  relation \"nope\" does not exist at character 15",
       LogLevel::error},
      {"2026-12-02 10:00:03.000 UTC [54] WARNING:  there is no transaction in progress",
       LogLevel::warn},
      {"2026-12-02 10:00:04.000 UTC [55] PANIC:  could not write to file \"pg_wal/xlogtemp.55\"",
       LogLevel::fatal},
      {"2026-12-02 10:00:02.000 UTC [53] STATEMENT:  select * from nope", LogLevel::unknown},
  });
}

TEST(LogLevel, Redis) {
  expect_all({
      {"1:M 02 Dec 2026 10:00:00.123 * Ready to accept connections tcp", LogLevel::info},
      {"1:C 02 Dec 2026 10:00:00.001 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
       LogLevel::warn},
      {"1:M 02 Dec 2026 10:00:00.200 # WARNING Memory overcommit must be enabled!", LogLevel::warn},
      {"1:M 02 Dec 2026 10:00:00.300 - Accepted 127.0.0.1:5000", LogLevel::info},
      {"1:S 02 Dec 2026 10:00:00.400 . Client closed connection", LogLevel::debug},
  });
}

TEST(LogLevel, PythonNodeAndGo) {
  expect_all({
      {"WARNING:root:disk almost full", LogLevel::warn},
      {"ERROR:app.worker:job 7 failed", LogLevel::error},
      {"INFO:werkzeug:127.0.0.1 - - \"GET / HTTP/1.1\" 200 -", LogLevel::info},
      {"2026-12-02 10:00:00,123 - app - CRITICAL - out of memory", LogLevel::error},
      {"Traceback (most recent call last):", LogLevel::error},
      {"[2026-12-02T10:00:00.000Z] warn: slow request /api (812 ms)", LogLevel::warn},
      {"panic: runtime error: index out of range [3] with length 3", LogLevel::fatal},
      {"time=2026-12-02T10:00:00Z level=DEBUG msg=\"cache miss\"", LogLevel::debug},
  });
}

TEST(LogLevel, JsonLinesNameOrNumberTheirLevel) {
  expect_all({
      {R"({"level":30,"time":1764669600000,"msg":"listening"})", LogLevel::info},
      {R"({"level":40,"msg":"deprecated option"})", LogLevel::warn},
      {R"({"level":50,"msg":"request failed"})", LogLevel::error},
      {R"({"level":60,"msg":"cannot bind"})", LogLevel::fatal},
      {R"({"level":20,"msg":"details"})", LogLevel::debug},
      {R"({"message":"ok","level":"warn"})", LogLevel::warn},
      {R"({"severity":"ERROR","message":"boom"})", LogLevel::error},
      {R"(  {"lvl": "info", "msg": "spaces before"})", LogLevel::info},
      // A message that mentions a level word decides nothing when the field says otherwise.
      {R"({"level":"info","msg":"no error here"})", LogLevel::info},
  });
}

TEST(LogLevel, LinesThatNameNoLevelAreUnknown) {
  expect_all({
      {"hello", LogLevel::unknown},
      {"", LogLevel::unknown},
      {"the log is rotated at midnight", LogLevel::unknown},  // "log" in prose
      {"{not json at all", LogLevel::unknown},
      {R"({"level":)", LogLevel::unknown},
  });
  // The level is looked for in the first 96 bytes only: a megabyte of text costs nothing more.
  EXPECT_EQ(classify_log_line(std::string(1 << 20, 'x') + " ERROR"), LogLevel::unknown);
  EXPECT_EQ(classify_log_line(std::string(100, ' ') + "ERROR"), LogLevel::unknown);
}

TEST(LogLevel, NamesParseInAnyCase) {
  EXPECT_EQ(parse_log_level("WARN"), LogLevel::warn);
  EXPECT_EQ(parse_log_level("warning"), LogLevel::warn);
  EXPECT_EQ(parse_log_level("Fatal"), LogLevel::fatal);
  EXPECT_EQ(parse_log_level("loud"), std::nullopt);
  EXPECT_EQ(to_string(LogLevel::unknown), "");
}

}  // namespace
}  // namespace stackie
