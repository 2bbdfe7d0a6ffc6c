// The `text` event of `logs -f` from the daemon's writer (src/supervisor/daemon_handlers.cc) to
// the CLI's decoder (src/cli/log_text_event.cc): the fast decoder takes exactly what the daemon
// writes and gives the lines the generic JSON parse gives; anything else it leaves to the parse.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/json.h"
#include "cli/log_text_event.h"
#include "ipc/protocol.h"
#include "supervisor/daemon_handlers.h"

namespace stackie {
namespace {

std::string event_line(ipc::RequestId id, std::span<const LogBatchLine> lines) {
  std::string line = ipc::encode_event(id, "text", [&](std::string& out) {
    write_log_text_event(out, "sh\"op", "d\x01b", LogStream::err, "2026-12-03T00:00:00.123Z",
                         lines);
  });
  line.pop_back();  // the client's splitter hands lines over without their newline
  return line;
}

TEST(LogTextEvent, TheDecoderTakesTheDaemonsEventAsTheJsonParseReadsIt) {
  const std::string nasty = std::string("quote \" back \\ slash / tab \t nul ") + '\0' +
                            " bad \xff\xfe \xe2\x82\xac \xf0\x9f\x98\x80 ctl \x01\x1f\x7f end";
  std::vector<std::string> texts = {"", "LOG:  ready", nasty, "plain", "\"", std::string(70, 'x')};
  std::vector<LogBatchLine> lines;
  for (size_t i = 0; i < texts.size(); ++i)
    lines.push_back({i + 1, static_cast<LogLevel>(i % 6), texts[i]});
  for (size_t count : {size_t(0), size_t(1), lines.size()}) {
    std::span<const LogBatchLine> some(lines.data(), count);
    const std::string line = event_line(42, some);
    // The writer is the Json's text.
    std::string written;
    write_log_text_event(written, "sh\"op", "d\x01b", LogStream::err, "2026-12-03T00:00:00.123Z",
                         some);
    EXPECT_EQ(written, to_json(log_text_event("sh\"op", "d\x01b", LogStream::err,
                                              "2026-12-03T00:00:00.123Z", some)));

    cli::LogText fast, slow;
    ASSERT_TRUE(cli::decode_log_text_event(line, 42, fast)) << line;
    auto parsed = ipc::decode_server_message(line);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    const auto& event = std::get<ipc::Event>(*parsed);
    EXPECT_EQ(event.name, "text");
    ASSERT_TRUE(cli::log_text_from_json(event.data, slow));
    EXPECT_EQ(fast.stack, slow.stack);
    EXPECT_EQ(fast.stack, "sh\"op");
    EXPECT_EQ(fast.block, slow.block);
    EXPECT_EQ(fast.stream, "stderr");
    EXPECT_EQ(fast.ts, "2026-12-03T00:00:00.123Z");
    EXPECT_EQ(fast.levels, slow.levels);
    EXPECT_EQ(fast.text, slow.text);
    ASSERT_EQ(fast.levels.size(), count);
    // Each line, followed by a newline, as a single `line` event carries its text (NUL and
    // bytes that are not UTF-8 as U+FFFD).
    std::string expected;
    for (size_t i = 0; i < count; ++i) {
      EXPECT_EQ(level_of_letter(fast.levels[i]), lines[i].level);
      LogLine single{lines[i].seq, 0, LogStream::err, lines[i].level, texts[i]};
      auto alone = parse_json(to_json(log_line_event("s", "b", single, "t")));
      ASSERT_TRUE(alone.ok());
      expected += (*alone)["text"].as_string() + "\n";
    }
    EXPECT_EQ(fast.text, expected);
  }
}

TEST(LogTextEvent, AnythingButTheDaemonsLineIsLeftToTheParse) {
  std::vector<LogBatchLine> lines = {{1, LogLevel::warn, "careful"}};
  const std::string line = event_line(7, lines);
  cli::LogText out;
  ASSERT_TRUE(cli::decode_log_text_event(line, 7, out));
  EXPECT_EQ(out.text, "careful\n");
  EXPECT_EQ(out.levels, "w");
  EXPECT_FALSE(cli::decode_log_text_event(line, 8, out)) << "another call's event";
  EXPECT_FALSE(cli::decode_log_text_event(line + " ", 7, out)) << "trailing bytes";
  EXPECT_FALSE(cli::decode_log_text_event(line.substr(0, line.size() - 1), 7, out));
  auto with_text = [&](const std::string& text) {
    std::string changed = line;
    const size_t at = changed.find("careful\\n");
    return changed.replace(at, std::string("careful\\n").size(), text);
  };
  EXPECT_FALSE(cli::decode_log_text_event(with_text("raw \x01 byte"), 7, out));
  EXPECT_FALSE(cli::decode_log_text_event(with_text("bad \\q escape"), 7, out));
  EXPECT_FALSE(cli::decode_log_text_event(with_text("nul \\u0000"), 7, out));
  EXPECT_FALSE(cli::decode_log_text_event(with_text("lone \\udc00 half"), 7, out));
  EXPECT_FALSE(cli::decode_log_text_event(with_text("high \\ud83d alone"), 7, out));
  EXPECT_FALSE(cli::decode_log_text_event(with_text("short \\u12"), 7, out));
  // Escapes JSON has, even those the daemon does not write, decode as the parse would.
  ASSERT_TRUE(
      cli::decode_log_text_event(with_text("\\u00e9 \\ud83d\\ude00 \\/ \\u0041\\n"), 7, out));
  EXPECT_EQ(out.text, "\xc3\xa9 \xf0\x9f\x98\x80 / A\n");
  auto parsed = ipc::decode_server_message(with_text("\\u00e9 \\ud83d\\ude00 \\/ \\u0041\\n"));
  ASSERT_TRUE(parsed.ok());
  cli::LogText slow;
  ASSERT_TRUE(cli::log_text_from_json(std::get<ipc::Event>(*parsed).data, slow));
  EXPECT_EQ(slow.text, out.text);
}

TEST(LogTextEvent, AJsonEventWithoutAFieldIsRefused) {
  cli::LogText out;
  auto data = parse_json(R"({"stack":"s","block":"b","stream":"stdout","ts":"t","levels":"."})");
  ASSERT_TRUE(data.ok());
  EXPECT_FALSE(cli::log_text_from_json(*data, out));
  data->set("text", "x\n");
  EXPECT_TRUE(cli::log_text_from_json(*data, out));
  EXPECT_EQ(out.text, "x\n");
}

}  // namespace
}  // namespace stackie
