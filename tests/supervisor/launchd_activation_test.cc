// What stackied makes of launch_activate_socket's answer (supervisor/launchd_activation.h). The
// call itself exists on macOS only; its outcome is decided here, on every OS.
#include "supervisor/launchd_activation.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace stackie {
namespace {

TEST(LaunchdActivation, NotStartedByLaunchdOrNoSocketsEntryMeansBindAsUsual) {
  auto not_launchd = launchd_activation_outcome(ESRCH, {});
  ASSERT_TRUE(not_launchd.ok()) << not_launchd.error().message;
  EXPECT_EQ(*not_launchd, -1);
  auto no_entry = launchd_activation_outcome(ENOENT, {});
  ASSERT_TRUE(no_entry.ok()) << no_entry.error().message;
  EXPECT_EQ(*no_entry, -1);
}

TEST(LaunchdActivation, OneSocketIsServed) {
  auto one = launchd_activation_outcome(0, {7});
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(*one, 7);
}

// A plist that passes sockets we cannot serve must not start a daemon that binds its own
// beside them: the CLI would reach launchd's socket and nobody would answer.
TEST(LaunchdActivation, AnythingElseIsAnErrorThatSaysWhat) {
  auto none = launchd_activation_outcome(0, {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("0 sockets"), std::string::npos) << none.error().message;
  auto two = launchd_activation_outcome(0, {7, 8});
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().message.find("2 sockets"), std::string::npos) << two.error().message;
  auto again = launchd_activation_outcome(EALREADY, {});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already"), std::string::npos) << again.error().message;
  auto other = launchd_activation_outcome(EPERM, {});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, -EPERM);
  EXPECT_NE(other.error().message.find("Listeners"), std::string::npos) << other.error().message;
}

// The test itself is no launchd job with a "Listeners" socket: on macOS launchd answers ESRCH
// (or ENOENT under a launchd job without that entry), elsewhere there is no launchd. Either
// way the daemon binds its own socket.
TEST(LaunchdActivation, OutsideSuchAJobThereIsNoLaunchdSocket) {
  auto taken = take_launchd_socket();
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(*taken, -1);
}

}  // namespace
}  // namespace stackie
