#include "base/error.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

namespace stackie {
namespace {

Result<int> parse_positive(int value) {
  if (value <= 0) return Error{0, "not positive"};
  return value;
}

Result<int> doubled(int value) {
  STACKIE_TRY_ASSIGN(checked, parse_positive(value));
  return checked * 2;
}

Status check_both(int a, int b) {
  STACKIE_TRY(parse_positive(a));
  STACKIE_TRY(parse_positive(b));
  return {};
}

TEST(Result, CarriesValueOrError) {
  Result<int> good = parse_positive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = parse_positive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "not positive");
}

TEST(Result, TryMacrosPropagateTheFirstError) {
  EXPECT_EQ(*doubled(4), 8);
  EXPECT_EQ(doubled(0).error().message, "not positive");
  EXPECT_TRUE(check_both(1, 2).ok());
  EXPECT_FALSE(check_both(1, -2).ok());
}

TEST(Result, MoveOnlyValues) {
  Result<std::unique_ptr<int>> owned = std::make_unique<int>(7);
  ASSERT_TRUE(owned.ok());
  std::unique_ptr<int> taken = std::move(owned).value();
  EXPECT_EQ(*taken, 7);
}

TEST(Error, LocationFormat) {
  EXPECT_EQ(error_at({"stack.yml", 3, 7}, "unknown field").message, "stack.yml:3:7: unknown field");
  EXPECT_EQ(error_at({"stack.yml", 0, 0}, "unreadable").message, "stack.yml: unreadable");
  Error sys = system_error(ENOENT, "open x");
  EXPECT_EQ(sys.code, -ENOENT);
  EXPECT_EQ(sys.message, "open x: No such file or directory");
}

}  // namespace
}  // namespace stackie
