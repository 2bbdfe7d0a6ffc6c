// `stackie up`'s progress display: plain lines per change, and live frames that redraw in place.
#include <gtest/gtest.h>

#include "base/json.h"
#include "cli/up_progress.h"

namespace stackie::cli {
namespace {

Json event(const char* block, const char* state, const char* health, const char* message = "") {
  return Json::object(
      {{"block", block}, {"state", state}, {"health", health}, {"message", message}});
}

Json plan_of(std::initializer_list<const char*> names) {
  Json blocks = Json::array();
  for (const char* name : names)
    blocks.push_back(Json::object({{"name", name},
                                   {"state", "created"},
                                   {"health", "none"},
                                   {"uptime_s", Json()},
                                   {"message", ""}}));
  return blocks;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

TEST(UpProgressPlain, OneLinePerChangeAndNoEscapes) {
  UpProgressView view({.live = false, .color = false, .width = 80, .height = 24});
  view.plan(plan_of({"db", "api"}), 0);
  EXPECT_EQ(view.render(0), "");
  view.progress(event("db", "starting", "starting"), 10);
  view.progress(event("db", "starting", "starting"), 20);  // the same again: not repeated
  view.progress(event("db", "running", "healthy", "healthy (tcp ok)"), 30);
  std::string out = view.render(40);
  EXPECT_EQ(out, "db: starting\ndb: running - healthy (tcp ok)\n");
  EXPECT_EQ(out.find('\033'), std::string::npos);
  EXPECT_EQ(view.render(50), "");
  EXPECT_FALSE(view.drawn());
}

TEST(UpProgressLive, RedrawsEveryBlockInPlace) {
  UpProgressView view({.live = true, .color = false, .width = 100, .height = 24});
  view.progress(event("db", "starting", "starting"), 1000);  // before the plan: kept
  EXPECT_EQ(view.render(1000), "") << "nothing drawn before the plan";
  view.plan(plan_of({"db", "api"}), 1000);
  std::string first = view.render(1000);
  EXPECT_EQ(first.rfind("\r\033[2K", 0), 0u) << "no cursor-up before the first frame";
  EXPECT_EQ(count(first, "\n"), 2u);
  EXPECT_LT(first.find("db"), first.find("api"));
  EXPECT_NE(first.find("waiting"), std::string::npos) << first;  // api waits for db

  std::string tick = view.render(3500);
  EXPECT_EQ(tick.rfind("\033[2A", 0), 0u) << "moves back over the two lines it drew";
  EXPECT_NE(tick.find("2.5s"), std::string::npos) << tick;  // db's clock runs

  view.progress(event("db", "running", "healthy", "healthy (ok)"), 4000);
  view.progress(event("api", "starting", "none"), 4000);
  view.progress(event("api", "running", "none", "line one\nline two of a log tail"), 4300);
  std::string last = view.render(9000);
  EXPECT_NE(last.find("3.0s"), std::string::npos) << "db's clock stopped when it ran: " << last;
  EXPECT_NE(last.find("0.3s"), std::string::npos) << last;
  EXPECT_NE(last.find("healthy"), std::string::npos);
  EXPECT_EQ(last.find("line two"), std::string::npos) << "one line per block";
  EXPECT_EQ(count(last, "\n"), 2u);
}

TEST(UpProgressLive, NeverWiderThanTheTerminal) {
  UpProgressView view({.live = true, .color = true, .width = 40, .height = 24});
  view.progress(event("a-block-with-a-long-name", "failed", "unhealthy",
                      "health check failed 3 times: connection refused"),
                0);
  std::string out = view.render(0, true);
  std::string line = out.substr(out.find("\033[2K") + 4);
  line = line.substr(0, line.find('\n'));
  std::string visible;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\033') {
      i = line.find('m', i);
      continue;
    }
    visible += line[i];
  }
  EXPECT_LE(visible.size(), 39u) << visible;
  EXPECT_NE(line.find("\033[31mfailed\033[0m"), std::string::npos) << line;
}

TEST(UpProgressLive, ATableTallerThanTheScreenIsPrintedPlain) {
  UpProgressView view({.live = true, .color = true, .width = 80, .height = 3});
  view.plan(plan_of({"a", "b", "c"}), 0);
  view.progress(event("a", "starting", "none"), 0);
  std::string out = view.render(100);
  EXPECT_EQ(out, "a: starting\n");
  EXPECT_FALSE(view.drawn());
}

TEST(UpProgress, ElapsedFormats) {
  EXPECT_EQ(UpProgressView::format_elapsed(400), "0.4s");
  EXPECT_EQ(UpProgressView::format_elapsed(12'345), "12.3s");
  EXPECT_EQ(UpProgressView::format_elapsed(65'000), "1m05s");
  EXPECT_EQ(UpProgressView::format_elapsed(7'380'000), "2h03m");
}

}  // namespace
}  // namespace stackie::cli
