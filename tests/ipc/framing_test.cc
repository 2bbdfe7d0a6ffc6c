#include "ipc/framing.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <string>
#include <vector>

namespace stackie::ipc {
namespace {

struct Collector {
  std::vector<std::string> lines;
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view line) { lines.emplace_back(line); };
  }
};

TEST(LineSplitter, SplitsLinesInOneChunk) {
  LineSplitter splitter;
  Collector out;
  ASSERT_TRUE(splitter.feed("a\nbc\n\nd", out.sink()).ok());
  EXPECT_EQ(out.lines, (std::vector<std::string>{"a", "bc"}));  // the empty line is skipped
  EXPECT_EQ(splitter.buffered(), 1u);                           // "d" waits for its end
}

TEST(LineSplitter, JoinsALineAcrossChunksOfEverySize) {
  const std::string stream = "{\"v\":1}\r\nsecond line\nthird\n";
  for (std::size_t size = 1; size <= stream.size(); ++size) {
    LineSplitter splitter;
    Collector out;
    for (std::size_t i = 0; i < stream.size(); i += size)
      ASSERT_TRUE(splitter.feed(std::string_view(stream).substr(i, size), out.sink()).ok());
    EXPECT_EQ(out.lines, (std::vector<std::string>{"{\"v\":1}", "second line", "third"}))
        << "chunk size " << size;
    EXPECT_EQ(splitter.buffered(), 0u);
  }
}

TEST(LineSplitter, DropsOnlyOneTrailingCarriageReturn) {
  LineSplitter splitter;
  Collector out;
  ASSERT_TRUE(splitter.feed("a\r\r\n\r\nb\rc\n", out.sink()).ok());
  EXPECT_EQ(out.lines, (std::vector<std::string>{"a\r", "b\rc"}));
}

TEST(LineSplitter, AcceptsALineOfExactlyTheLimit) {
  LineSplitter splitter(8);
  Collector out;
  ASSERT_TRUE(splitter.feed("1234", out.sink()).ok());
  ASSERT_TRUE(splitter.feed("5678\n", out.sink()).ok());
  EXPECT_EQ(out.lines, (std::vector<std::string>{"12345678"}));
}

TEST(LineSplitter, FailsAsSoonAsAnUnfinishedLineIsTooLong) {
  LineSplitter splitter(8);
  Collector out;
  ASSERT_TRUE(splitter.feed("12345", out.sink()).ok());
  Status status = splitter.feed("6789", out.sink());  // 9 bytes, no newline yet
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, UV_E2BIG);
  EXPECT_NE(status.error().message.find("limit of 8 bytes"), std::string::npos);
  EXPECT_TRUE(splitter.failed());
  EXPECT_EQ(splitter.buffered(), 0u);  // nothing kept of the overlong line
  // Failed for good: the framing is lost.
  EXPECT_FALSE(splitter.feed("\nok\n", out.sink()).ok());
  EXPECT_TRUE(out.lines.empty());
}

TEST(LineSplitter, DeliversLinesBeforeTheOverlongOne) {
  LineSplitter splitter(4);
  Collector out;
  Status status = splitter.feed("ab\ncd\ntoolong\nxy\n", out.sink());
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(out.lines, (std::vector<std::string>{"ab", "cd"}));
}

TEST(LineSplitter, AnOverlongCompleteLineInOneChunkFails) {
  LineSplitter splitter(4);
  Collector out;
  EXPECT_FALSE(splitter.feed("12345\n", out.sink()).ok());
  EXPECT_TRUE(out.lines.empty());
}

TEST(LineSplitter, MemoryStaysBoundedWhatever100MbArrive) {
  LineSplitter splitter(1 << 20);
  Collector out;
  const std::string chunk(64 * 1024, 'x');
  std::size_t fed = 0;
  std::size_t max_buffered = 0;
  Status status;
  while (fed < (std::size_t{100} << 20)) {
    status = splitter.feed(chunk, out.sink());
    fed += chunk.size();
    max_buffered = std::max(max_buffered, splitter.buffered());
    if (!status.ok()) break;
  }
  EXPECT_FALSE(status.ok());
  EXPECT_LE(max_buffered, std::size_t{1} << 20);
  EXPECT_LE(fed, (std::size_t{1} << 20) + chunk.size());  // refused right after the limit
}

}  // namespace
}  // namespace stackie::ipc
