// How `stackie exec` turns the daemon's reply into the words it runs (cli/exec_plan.h): it must
// fail closed, never run CMD outside a sandbox because the reply lacked a way in.
#include "cli/exec_plan.h"

#include <gtest/gtest.h>

namespace stackie::cli {
namespace {

Json reply_with(std::initializer_list<std::pair<std::string, Json>> members) {
  Json reply = Json::object(members);
  reply.set("cwd", "/srv");
  return reply;
}

TEST(ExecPlan, APassthroughBlockRunsCmdDirectly) {
  auto plan = exec_plan(reply_with({{"sandbox", "passthrough"}, {"lockbox", Json()}}), Json());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_FALSE(plan->sandboxed());
  EXPECT_TRUE(plan->prefix.empty());
}

TEST(ExecPlan, ALinuxBlockIsJoinedThroughTheLockbox) {
  auto plan = exec_plan(reply_with({{"sandbox", "linux-namespaces"},
                                    {"lockbox", "/usr/libexec/stackie/stackie-lockbox"},
                                    {"join_pid", 42},
                                    {"sandbox_id", "shop-web"}}),
                        Json::object({{"PGHOST", "db"}}));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_TRUE(plan->sandboxed());
  std::vector<std::string> want = {"/usr/libexec/stackie/stackie-lockbox",
                                   "--join",
                                   "42",
                                   "--pass-env",
                                   "PGHOST",
                                   "--chdir",
                                   "/srv",
                                   "--name",
                                   "shop-web",
                                   "--"};
  EXPECT_EQ(plan->prefix, want);
  EXPECT_EQ(plan->env, std::vector<std::string>{"PGHOST=db"});
}

TEST(ExecPlan, TheDaemonsOwnLauncherWordsAreTakenAsTheyAre) {
  Json launcher = Json::array();
  for (const char* word : {"C:/stackie/stackie-lockbox.exe", "--name", "shop-web", "--"})
    launcher.push_back(word);
  auto plan =
      exec_plan(reply_with({{"sandbox", "restricted-token"}, {"launcher", launcher}}), Json());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_TRUE(plan->sandboxed());
  EXPECT_EQ(plan->prefix.front(), "C:/stackie/stackie-lockbox.exe");
}

TEST(ExecPlan, ASandboxedBlockWithoutAWayInIsRefusedNotRunOutside) {
  // An empty launcher (the block's init script still runs, say) once made CMD run directly.
  auto empty =
      exec_plan(reply_with({{"sandbox", "restricted-token"}, {"launcher", Json::array()}}), Json());
  EXPECT_FALSE(empty.ok());
  Json unterminated = Json::array();
  unterminated.push_back("C:/stackie/stackie-lockbox.exe");
  unterminated.push_back("--name");
  EXPECT_FALSE(
      exec_plan(reply_with({{"sandbox", "restricted-token"}, {"launcher", unterminated}}), Json())
          .ok());
  auto nothing = exec_plan(reply_with({{"sandbox", "linux-namespaces"}}), Json());
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.error().message.find("refusing to run the command outside it"),
            std::string::npos);
}

}  // namespace
}  // namespace stackie::cli
