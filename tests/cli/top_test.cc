// `stackie top`'s pure parts: the model fed with the daemon's documents, the layout of the
// screen, the diff that rewrites only changed rows, the key decoder, and what a hostile block's
// log line becomes on screen.
#include <gtest/gtest.h>

#include <string>

#include "base/json.h"
#include "cli/terminal_text.h"
#include "cli/top_model.h"
#include "cli/top_terminal.h"
#include "cli/top_view.h"

namespace stackie::cli {
namespace {

Json array_of(std::initializer_list<Json> items) {
  Json out = Json::array();
  for (const auto& item : items) out.push_back(item);
  return out;
}

Json ps_row(const char* name, const char* state, int64_t restarts = 0) {
  return Json::object(
      {{"stack", "shop"},
       {"name", name},
       {"state", state},
       {"health", "healthy"},
       {"pid", 4242},
       {"uptime_s", 65},
       {"restarts", restarts},
       {"ports", array_of({Json::object(
                     {{"name", "http"}, {"host", "127.0.0.1:8080"}, {"sandbox", 80}})})}});
}

Json ps_of(std::initializer_list<Json> rows) {
  Json blocks = Json::array();
  for (const auto& row : rows) blocks.push_back(row);
  return Json::object({{"v", 1}, {"blocks", blocks}});
}

Json line(const char* block, const std::string& text, const char* stack = "shop") {
  return Json::object({{"stack", stack}, {"block", block}, {"stream", "stdout"}, {"text", text}});
}

// The rows without their SGR sequences: what a capture of the screen shows.
std::string plain(const std::string& row) {
  std::string out;
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\033') {
      while (i < row.size() && row[i] != 'm') ++i;
      continue;
    }
    out += row[i];
  }
  return out;
}

std::string screen_text(const std::vector<std::string>& rows) {
  std::string out;
  for (const auto& row : rows) out += plain(row) + "\n";
  return out;
}

TopModel two_blocks() {
  TopModel model("shop");
  model.apply_ps(ps_of({ps_row("db", "running"), ps_row("api", "starting")}));
  return model;
}

TEST(TopModel, KeepsTheSelectionByNameAcrossRefreshes) {
  TopModel model = two_blocks();
  ASSERT_NE(model.selected(), nullptr);
  EXPECT_EQ(model.selected()->name, "db");
  model.move_selection(1);
  EXPECT_EQ(model.selected()->name, "api");
  model.move_selection(5);  // clamped
  EXPECT_EQ(model.selected()->name, "api");
  model.apply_ps(ps_of({ps_row("api", "running", 2), ps_row("db", "running")}));
  EXPECT_EQ(model.selected()->name, "api");
  EXPECT_EQ(model.selected()->restarts, 2);
  model.apply_ps(ps_of({ps_row("db", "running")}));  // api left the stack
  EXPECT_EQ(model.selected()->name, "db");
}

TEST(TopModel, OtherStacksAreNotOurs) {
  TopModel model("shop");
  Json other = ps_row("cache", "running");
  other.set("stack", "blog");
  model.apply_ps(ps_of({ps_row("db", "running"), other}));
  ASSERT_EQ(model.blocks().size(), 1u);
  model.add_log(line("cache", "from another stack", "blog"));
  EXPECT_TRUE(model.visible_logs(10).empty());
}

TEST(TopModel, StatsFillCpuAndMemoryAndAStoppedBlockHasNone) {
  TopModel model = two_blocks();
  model.apply_stats(Json::object({{"blocks", array_of({Json::object({{"stack", "shop"},
                                                                     {"name", "db"},
                                                                     {"state", "running"},
                                                                     {"cpu_percent", 12.5},
                                                                     {"memory_bytes", 3 << 20},
                                                                     {"uptime_s", 70}})})}}));
  EXPECT_EQ(model.blocks()[0].cpu_percent.value_or(-1), 12.5);
  EXPECT_EQ(model.blocks()[0].memory_bytes.value_or(-1), 3 << 20);
  model.apply_ps(ps_of({ps_row("db", "running"), ps_row("api", "starting")}));
  EXPECT_EQ(model.blocks()[0].cpu_percent.value_or(-1), 12.5);  // kept until the next sample
  model.apply_ps(ps_of({ps_row("db", "stopped"), ps_row("api", "starting")}));
  EXPECT_FALSE(model.blocks()[0].cpu_percent.has_value());
}

TEST(TopModel, TheLogPaneFollowsOneOrAllFiltersAndScrolls) {
  TopModel model = two_blocks();
  for (int i = 0; i < 6; ++i) {
    model.add_log(line("db", "db line " + std::to_string(i)));
    model.add_log(line("api", "api line " + std::to_string(i)));
  }
  auto texts = [&](size_t rows) {
    std::string out;
    for (const auto* l : model.visible_logs(rows)) out += l->text + ";";
    return out;
  };
  EXPECT_EQ(texts(3), "api line 4;db line 5;api line 5;");  // all, newest last
  model.toggle_follow_all();                                // the selected block: db
  EXPECT_EQ(texts(2), "db line 4;db line 5;");
  model.set_filter("line 1");
  EXPECT_EQ(texts(5), "db line 1;");
  model.set_filter("");
  model.scroll_by(2);
  EXPECT_EQ(texts(2), "db line 2;db line 3;");
  model.add_log(line("db", "db line 6"));  // scrolled back: the view stays put
  EXPECT_EQ(texts(2), "db line 2;db line 3;");
  model.scroll_by(100);  // no further back than the oldest line
  EXPECT_EQ(texts(2), "db line 0;");
  model.scroll_by(-100);
  EXPECT_EQ(model.scroll(), 0u);
  EXPECT_EQ(texts(1), "db line 6;");
}

TEST(TopModel, LogLinesAreBounded) {
  TopModel model = two_blocks();
  for (size_t i = 0; i < TopModel::kMaxLogLines + 10; ++i) model.add_log(line("db", "x"));
  EXPECT_EQ(model.visible_logs(TopModel::kMaxLogLines + 100).size(), TopModel::kMaxLogLines);
}

TEST(TopLayout, ShowsEveryBlockWithItsColumnsAndTheLogs) {
  TopModel model = two_blocks();
  model.add_log(line("api", "listening on :8080"));
  auto rows = top_layout(model, {100, 12}, {});
  ASSERT_EQ(rows.size(), 12u);
  for (const auto& row : rows) EXPECT_EQ(display_width(plain(row)), 100u) << plain(row);
  std::string text = screen_text(rows);
  EXPECT_NE(text.find("stack shop - 2 blocks"), std::string::npos) << text;
  EXPECT_NE(text.find("NAME"), std::string::npos);
  EXPECT_NE(text.find("> db   running   healthy   4242"), std::string::npos) << text;
  EXPECT_NE(text.find("api  starting"), std::string::npos) << text;
  EXPECT_NE(text.find("127.0.0.1:8080->80"), std::string::npos) << text;
  EXPECT_NE(text.find("1m05s"), std::string::npos) << text;
  EXPECT_NE(text.find("api  | listening on :8080"), std::string::npos) << text;
  EXPECT_NE(text.find("q quit"), std::string::npos) << text;
}

TEST(TopLayout, NoColourUnderNoColorButTheSelectionStaysVisible) {
  TopModel model = two_blocks();
  model.add_log(line("api", "hello"));
  TopViewOptions no_color;
  no_color.color = false;
  std::string text;
  for (const auto& row : top_layout(model, {80, 12}, no_color)) text += row;
  EXPECT_EQ(text.find("\033[3"), std::string::npos) << "a foreground colour under NO_COLOR";
  EXPECT_NE(text.find("\033[7m"), std::string::npos) << "the selected row in reverse video";
  std::string coloured;
  for (const auto& row : top_layout(model, {80, 12}, {})) coloured += row;
  EXPECT_NE(coloured.find("\033[33mstarting"), std::string::npos) << "starting in yellow";
}

TEST(TopLayout, ASmallTerminalIsToldWhatItLacks) {
  TopModel model = two_blocks();
  auto rows = top_layout(model, {40, 8}, {});
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(plain(rows[0]), fit("terminal too small: 40x8", 40));
  EXPECT_EQ(plain(rows[1]), fit("stackie top needs 50x10", 40));
  EXPECT_EQ(plain(rows[2]), fit("q quits", 40));
  for (const auto& row : rows) EXPECT_EQ(display_width(plain(row)), 40u);
}

TEST(TopLayout, ManyBlocksScrollToKeepTheSelectionOnScreen) {
  TopModel model("shop");
  Json rows = Json::array();
  for (int i = 0; i < 20; ++i) rows.push_back(ps_row(("b" + std::to_string(i)).c_str(), "running"));
  model.apply_ps(Json::object({{"blocks", rows}}));
  for (int i = 0; i < 15; ++i) model.move_selection(1);
  std::string text = screen_text(top_layout(model, {80, 12}, {}));
  EXPECT_NE(text.find("> b15"), std::string::npos) << text;
  EXPECT_EQ(text.find(" b0 "), std::string::npos) << text;
}

TEST(TopLayout, ErrorAndWarningLinesAreColouredByTheirLevel) {
  TopModel model = two_blocks();
  Json error = line("db", "FATAL: the disk is full");
  error.set("level", "fatal");
  Json warning = line("db", "WARNING: slow query");
  warning.set("level", "warn");
  model.add_log(error);
  model.add_log(warning);
  model.add_log(line("db", "plain"));
  std::string text;
  for (const auto& row : top_layout(model, {80, 12}, {})) text += row;
  EXPECT_NE(text.find("\033[31mFATAL: the disk is full"), std::string::npos) << text;
  EXPECT_NE(text.find("\033[33mWARNING: slow query"), std::string::npos) << text;
  EXPECT_NE(text.find("| \033[0mplain"), std::string::npos) << text;
}

TEST(TopLayout, FilterInputAndStatusTakeTheBottomRow) {
  TopModel model = two_blocks();
  TopViewOptions typing;
  typing.editing_filter = true;
  typing.filter_draft = "err";
  auto rows = top_layout(model, {80, 12}, typing);
  EXPECT_EQ(plain(rows.back()).substr(0, 12), "filter: err_");
  model.set_status("restarting db: done");
  rows = top_layout(model, {80, 12}, {});
  EXPECT_EQ(plain(rows.back()).substr(0, 19), "restarting db: done");
}

// The block writes its log; whoever watches it must not have their terminal driven by it: a
// clear screen, a title change (OSC), a cursor move, C1 controls and a bidi override arrive as
// '?' and the row keeps its width.
TEST(TopLayout, AHostileLogLineCannotDriveTheTerminal) {
  TopModel model = two_blocks();
  model.add_log(line("api",
                     "a\033[2Jb\033]0;pwned\007c\033[10;1Hd\xc2\x9b"
                     "e\xe2\x80\xae"
                     "f\rg\xff"));
  auto rows = top_layout(model, {80, 12}, {});
  std::string text = screen_text(rows);
  EXPECT_NE(text.find("a?[2Jb?]0;pwned?c?[10;1Hd?e?f?g?"), std::string::npos) << text;
  for (const auto& row : rows) {
    std::string p = plain(row);
    for (char c : p) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << p;
    EXPECT_EQ(display_width(p), 80u);
  }
}

TEST(TopText, FitCountsWideCharactersAndNeverCutsOneInHalf) {
  EXPECT_EQ(fit("abc", 5), "abc  ");
  EXPECT_EQ(fit("abcdef", 3), "abc");
  EXPECT_EQ(display_width("日本"), 4u);
  EXPECT_EQ(fit("日本", 3), "日 ");
  EXPECT_EQ(fit("é", 2), "é ");
  EXPECT_EQ(terminal_safe("tab\there"), "tab here");
}

TEST(TopText, SeveralLinesKeepTheirNewlinesOnly) {
  EXPECT_EQ(terminal_safe_lines("failed:\n\033]2;x\007 one\n\033[2Jtwo"),
            "failed:\n?]2;x? one\n?[2Jtwo");
  EXPECT_EQ(terminal_safe_lines("end\n"), "end\n");
  EXPECT_EQ(terminal_safe_lines(""), "");
}

// `logs --json` on a terminal: JSON may hold C1 controls and bidi overrides raw (only C0 must be
// escaped); written as escapes, the line is still the same JSON.
TEST(TopText, JsonOnATerminalEscapesWhatJsonMayCarryRaw) {
  const std::string line =
      to_json(Json::object({{"text", std::string("csi\xC2\x9B"
                                                 "2J rlo\xE2\x80\xAE"
                                                 "fdp.exe del\x7F ok \xC3\xA9")}}));
  const std::string safe = terminal_safe_json(line);
  EXPECT_EQ(safe, R"({"text":"csi\u009b2J rlo\u202efdp.exe del\u007f ok )"
                  "\xC3\xA9"
                  R"("})");
  auto parsed = parse_json(safe);
  ASSERT_TRUE(parsed.ok()) << safe;
  EXPECT_EQ((*parsed)["text"], (*parse_json(line))["text"]) << "the same JSON";
  EXPECT_EQ(terminal_safe_json(R"({"a":"plain"})"), R"({"a":"plain"})");
}

TEST(ScreenDiff, RewritesOnlyTheRowsThatChanged) {
  ScreenDiff diff;
  std::vector<std::string> rows = {"one  ", "two  ", "three"};
  std::string first = diff.update(rows);
  EXPECT_EQ(first, "\033[H\033[2J\033[1;1Hone  \033[2;1Htwo  \033[3;1Hthree");
  EXPECT_EQ(diff.update(rows), "");
  rows[1] = "TWO  ";
  EXPECT_EQ(diff.update(rows), "\033[2;1HTWO  ");
  diff.invalidate();
  EXPECT_EQ(diff.update(rows).substr(0, 7), "\033[H\033[2J");
  rows.pop_back();  // a resize: everything again
  EXPECT_EQ(diff.update(rows), "\033[H\033[2J\033[1;1Hone  \033[2;1HTWO  ");
}

TEST(TopKeys, DecodesLettersArrowsPagesAndEscape) {
  auto keys = decode_keys("q\033[A\033[B\033OA\033[5~\033[6~\033[F\r\x7f\x03\033");
  std::vector<Key> kinds;
  for (const auto& k : keys) kinds.push_back(k.key);
  std::vector<Key> wanted = {Key::character, Key::up,        Key::down,  Key::up,
                             Key::page_up,   Key::page_down, Key::end,   Key::enter,
                             Key::backspace, Key::interrupt, Key::escape};
  EXPECT_EQ(kinds, wanted);
  EXPECT_EQ(keys[0].ch, 'q');
  EXPECT_TRUE(decode_keys("\033[1;5").empty());    // cut short: dropped
  EXPECT_EQ(decode_keys("\033[24~x").size(), 1u);  // an F-key ignored, the x kept
}

}  // namespace
}  // namespace stackie::cli
