#include "stack/env_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_support.h"

namespace stackie {
namespace {

using testing::TempDir;

std::vector<std::pair<std::string, std::string>> pairs(std::string_view text) {
  auto entries = parse_env_file(text, "app.env");
  EXPECT_TRUE(entries.ok()) << entries.error().message;
  std::vector<std::pair<std::string, std::string>> out;
  if (entries.ok())
    for (const auto& entry : *entries) out.emplace_back(entry.name, entry.value);
  return out;
}

std::string error_of(std::string_view text) {
  auto entries = parse_env_file(text, "app.env");
  return entries.ok() ? "<no error>" : entries.error().message;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(EnvFile, CommentsExportAndUnquotedValues) {
  EXPECT_EQ(pairs("# a comment\n\n  export A=1\nB = two words  \nC=x=y\nD=\nE=a#b\nF=a #c\n"
                  "G=#not a value\n"),
            (Pairs{{"A", "1"},
                   {"B", "two words"},
                   {"C", "x=y"},
                   {"D", ""},
                   {"E", "a#b"},
                   {"F", "a"},
                   {"G", ""}}));
}

TEST(EnvFile, QuotesEscapesAndLinesQuotesSpan) {
  EXPECT_EQ(pairs("A='single $HOME \\n # kept'\nB=\"tab\\tnew\\nline \\\"q\\\" \\$x \\d\"\n"
                  "C=\"two\nlines\" # comment\n"),
            (Pairs{{"A", "single $HOME \\n # kept"},
                   {"B", "tab\tnew\nline \"q\" $x \\d"},
                   {"C", "two\nlines"}}));
}

TEST(EnvFile, NothingIsInterpolatedAndCrlfIsTolerated) {
  EXPECT_EQ(pairs("A=${HOME}\r\nB=$$\r\n"), (Pairs{{"A", "${HOME}"}, {"B", "$$"}}));
}

TEST(EnvFile, RepeatedNamesStayInOrderAndKeepTheirPositions) {
  auto entries = parse_env_file("A=1\n\n  export A=2\n", "app.env");
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[1].value, "2");
  EXPECT_EQ(format_location((*entries)[1].where), "app.env:3:10");
}

TEST(EnvFile, ErrorsSayFileLineColumn) {
  EXPECT_EQ(error_of("A=1\njunk\n"), "app.env:2:5: expected '=' after 'junk' (NAME=VALUE)");
  EXPECT_EQ(error_of("A=1\n  9LIVES=x\n"),
            "app.env:2:3: expected NAME=VALUE (a NAME starts with a letter or '_')");
  EXPECT_EQ(error_of("MY VAR=1\n"),
            "app.env:1:4: unexpected 'V' in the name 'MY' (expected "
            "NAME=VALUE)");
  EXPECT_EQ(error_of("A=1\nB=\"open\nC=2\n"), "app.env:2:3: unterminated double-quoted value");
  EXPECT_EQ(error_of("B='x' y\n"),
            "app.env:1:7: unexpected 'y' after the closing quote (a value with spaces goes "
            "inside the quotes)");
  EXPECT_EQ(error_of("D='a''\n"),
            "app.env:1:6: unexpected ''' after the closing quote (a value with spaces goes "
            "inside the quotes)");
  EXPECT_EQ(error_of(std::string_view("A=\"x\0y\"\n", 8)), "app.env:1:5: a NUL byte in a value");
}

// The env file lives in the project directory, which a first-party block may write: what the
// daemon reads must be the user's file, never one a block planted.
TEST(EnvFile, ReadRefusesSymlinksBelowTheStackDirectoryFifosAndHugeFiles) {
  TempDir dir;
  std::string secret = dir.write("outside/id_rsa", "PRIVATE KEY\n");
  std::string good = dir.write("proj/app.env", "A=1\n");
  auto read = read_env_file(good, dir / "proj");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, "A=1\n");

  ASSERT_EQ(::symlink(secret.c_str(), (dir / "proj/planted.env").c_str()), 0);
  auto planted = read_env_file(dir / "proj/planted.env", dir / "proj");
  ASSERT_FALSE(planted.ok()) << "followed a planted symlink: " << *planted;
  EXPECT_NE(planted.error().message.find(dir / "proj/planted.env"), std::string::npos);

  ASSERT_EQ(::symlink((dir / "outside").c_str(), (dir / "proj/linked").c_str()), 0);
  EXPECT_FALSE(read_env_file(dir / "proj/linked/id_rsa", dir / "proj").ok())
      << "a symlinked directory on the way below the stack directory";

  EXPECT_FALSE(read_env_file(dir / "proj/planted.env", "/nonexistent-root").ok())
      << "outside the trusted directory the file itself may not be a link";

  ASSERT_EQ(::mkfifo((dir / "proj/fifo.env").c_str(), 0600), 0);
  auto fifo = read_env_file(dir / "proj/fifo.env", dir / "proj");
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().message, dir / "proj/fifo.env" + ": not a regular file");

  std::string huge = dir.write("proj/huge.env", std::string((1 << 20) + 1, 'x'));
  EXPECT_FALSE(read_env_file(huge, dir / "proj").ok());
}

}  // namespace
}  // namespace stackie
