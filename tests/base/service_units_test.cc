// The service files of `stackie daemon install` and share/: content, escaping, where they go.
#include "cli/service_units.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace stackie {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

ServiceSpec plain_spec() {
  ServiceSpec spec;
  spec.daemon_program = "/usr/bin/stackied";
  spec.socket_path = "/run/user/1000/stackie/stackied.sock";
  spec.runtime_dir = "/run/user/1000";
  return spec;
}

TEST(ServiceUnits, SystemdServiceIsNotifyForegroundAndSignalsOnlyTheDaemon) {
  std::string unit = systemd_service_unit(plain_spec());
  EXPECT_TRUE(has_line(unit, "[Service]")) << unit;
  EXPECT_TRUE(has_line(unit, "Type=notify")) << unit;
  EXPECT_TRUE(has_line(unit, "ExecStart=/usr/bin/stackied --foreground")) << unit;
  EXPECT_TRUE(has_line(unit, "KillMode=mixed")) << unit;
  EXPECT_TRUE(has_line(unit, "Delegate=yes")) << unit;  // a cgroup per block (limits)
  EXPECT_TRUE(has_line(unit, "Restart=on-failure")) << unit;
  EXPECT_TRUE(has_line(unit, "WantedBy=default.target")) << unit;
  EXPECT_EQ(unit.find("Environment="), std::string::npos) << "no STACKIE_HOME given: " << unit;
}

TEST(ServiceUnits, SystemdEscapesSpecifiersVariablesAndSpaces) {
  ServiceSpec spec = plain_spec();
  spec.daemon_program = "/opt/my tools/100%/$bin/stackied";
  spec.stackie_home = "/home/a/my \"st\" 50%";
  std::string unit = systemd_service_unit(spec);
  EXPECT_TRUE(has_line(unit, R"(ExecStart="/opt/my tools/100%%/$$bin/stackied" --foreground)"))
      << unit;
  EXPECT_TRUE(has_line(unit, R"(Environment="STACKIE_HOME=/home/a/my \"st\" 50%%")")) << unit;
}

TEST(ServiceUnits, SocketUnderTheRuntimeDirIsWrittenWithPercentT) {
  std::string unit = systemd_socket_unit(plain_spec());
  EXPECT_TRUE(has_line(unit, "ListenStream=%t/stackie/stackied.sock")) << unit;
  EXPECT_TRUE(has_line(unit, "SocketMode=0600")) << unit;
  EXPECT_TRUE(has_line(unit, "DirectoryMode=0700")) << unit;
  EXPECT_TRUE(has_line(unit, "WantedBy=sockets.target")) << unit;

  ServiceSpec elsewhere = plain_spec();
  elsewhere.socket_path = "/home/a/.stackie/run/stackied.sock";
  EXPECT_TRUE(
      has_line(systemd_socket_unit(elsewhere), "ListenStream=/home/a/.stackie/run/stackied.sock"));
  // "/run/user/10000" is not below "/run/user/1000".
  elsewhere.socket_path = "/run/user/10000/s.sock";
  EXPECT_TRUE(has_line(systemd_socket_unit(elsewhere), "ListenStream=/run/user/10000/s.sock"));
  ServiceSpec packaged;
  packaged.daemon_program = "/usr/bin/stackied";
  EXPECT_TRUE(has_line(systemd_socket_unit(packaged), "ListenStream=%t/stackie/stackied.sock"));
}

TEST(ServiceUnits, LaunchdPlistEscapesXmlAndKeepsAliveOnFailureOnly) {
  ServiceSpec spec = plain_spec();
  spec.daemon_program = "/Users/a&b/<bin>/stackied";
  spec.stackie_home = "/Users/a&b/.stackie";
  spec.log_path = "/Users/a&b/.stackie/stackied.log";
  std::string plist = launchd_plist(spec, false);
  EXPECT_TRUE(has_line(plist, "\t<string>dev.stackie.stackied</string>")) << plist;
  EXPECT_TRUE(has_line(plist, "\t\t<string>/Users/a&amp;b/&lt;bin&gt;/stackied</string>")) << plist;
  EXPECT_TRUE(has_line(plist, "\t\t<string>--foreground</string>")) << plist;
  EXPECT_TRUE(has_line(plist, "\t\t<key>SuccessfulExit</key>")) << plist;
  EXPECT_TRUE(has_line(plist, "\t<key>StandardErrorPath</key>")) << plist;
  EXPECT_TRUE(has_line(plist, "\t<string>/Users/a&amp;b/.stackie/stackied.log</string>")) << plist;
  EXPECT_TRUE(has_line(plist, "\t\t<string>/Users/a&amp;b/.stackie</string>")) << plist;
  spec.log_path.clear();
  EXPECT_EQ(launchd_plist(spec, false).find("StandardOutPath"), std::string::npos);
}

TEST(ServiceUnits, LaunchdPlistWithoutActivationRunsAtLoadAndHasNoSockets) {
  std::string plist = launchd_plist(plain_spec(), false);
  EXPECT_TRUE(has_line(plist, "\t<key>RunAtLoad</key>")) << plist;
  EXPECT_EQ(plist.find("Sockets"), std::string::npos) << plist;
}

// The Sockets entry stackied asks launchd for (launch_activate_socket "Listeners"), on the same
// path the CLI connects to; the daemon starts on the first connection, not at login.
TEST(ServiceUnits, LaunchdPlistWithActivationListensOnTheCliSocket) {
  ServiceSpec spec = plain_spec();
  spec.socket_path = "/Users/a&b/.stackie/run/stackied.sock";
  std::string plist = launchd_plist(spec, true);
  // SockPathMode 384 is 0600: plists have no octal.
  const std::string entry =
      "\t<key>Sockets</key>\n\t<dict>\n\t\t<key>Listeners</key>\n\t\t<dict>\n"
      "\t\t\t<key>SockPathName</key>\n"
      "\t\t\t<string>/Users/a&amp;b/.stackie/run/stackied.sock</string>\n"
      "\t\t\t<key>SockPathMode</key>\n\t\t\t<integer>384</integer>\n\t\t</dict>\n\t</dict>\n";
  EXPECT_NE(plist.find(entry), std::string::npos) << plist;
  EXPECT_EQ(plist.find("RunAtLoad"), std::string::npos) << plist;
  EXPECT_TRUE(has_line(plist, "\t\t<key>SuccessfulExit</key>")) << plist;
  EXPECT_TRUE(has_line(plist, "\t\t<string>--foreground</string>")) << plist;
}

TEST(ServiceUnits, UnitDirectoryFollowsXdgConfigHome) {
  EXPECT_EQ(*systemd_user_unit_dir({{"HOME", "/home/a"}}), "/home/a/.config/systemd/user");
  EXPECT_EQ(*systemd_user_unit_dir({{"HOME", "/home/a"}, {"XDG_CONFIG_HOME", "/cfg/"}}),
            "/cfg/systemd/user");
  // A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
  EXPECT_EQ(*systemd_user_unit_dir({{"HOME", "/home/a"}, {"XDG_CONFIG_HOME", "cfg"}}),
            "/home/a/.config/systemd/user");
  EXPECT_FALSE(systemd_user_unit_dir({}).ok());
  EXPECT_EQ(*launch_agents_dir({{"HOME", "/Users/a"}}), "/Users/a/Library/LaunchAgents");
}

TEST(ServiceUnits, InstallPlanPerPlatform) {
  Environment env{{"HOME", "/home/a"}};
  auto linux_plan = plan_service_install("linux", plain_spec(), env, false);
  ASSERT_TRUE(linux_plan.ok()) << linux_plan.error().message;
  ASSERT_EQ(linux_plan->files.size(), 1u);
  EXPECT_EQ(linux_plan->files[0].path, "/home/a/.config/systemd/user/stackied.service");
  ASSERT_EQ(linux_plan->enable_commands.size(), 1u);
  EXPECT_EQ(linux_plan->enable_commands[0],
            "systemctl --user daemon-reload && systemctl --user enable --now stackied.service");

  auto activated = plan_service_install("linux", plain_spec(), env, true);
  ASSERT_TRUE(activated.ok());
  ASSERT_EQ(activated->files.size(), 2u);
  EXPECT_EQ(activated->files[1].path, "/home/a/.config/systemd/user/stackied.socket");
  EXPECT_NE(activated->enable_commands[0].find("enable --now stackied.socket"), std::string::npos);

  auto mac = plan_service_install("macos", plain_spec(), {{"HOME", "/Users/a"}}, false);
  ASSERT_TRUE(mac.ok());
  EXPECT_EQ(mac->files[0].path, "/Users/a/Library/LaunchAgents/dev.stackie.stackied.plist");
  EXPECT_EQ(mac->enable_commands[0],
            "launchctl bootstrap gui/$(id -u) "
            "/Users/a/Library/LaunchAgents/dev.stackie.stackied.plist");

  EXPECT_TRUE(mac->directories.empty());
  EXPECT_EQ(mac->files[0].text.find("Sockets"), std::string::npos);

  ServiceSpec mac_spec = plain_spec();
  mac_spec.socket_path = "/Users/a/.stackie/run/stackied.sock";
  auto mac_activated = plan_service_install("macos", mac_spec, {{"HOME", "/Users/a"}}, true);
  ASSERT_TRUE(mac_activated.ok()) << mac_activated.error().message;
  ASSERT_EQ(mac_activated->files.size(), 1u);
  EXPECT_NE(
      mac_activated->files[0].text.find("<string>/Users/a/.stackie/run/stackied.sock</string>"),
      std::string::npos)
      << mac_activated->files[0].text;
  // launchd binds in the directory but does not make it.
  ASSERT_EQ(mac_activated->directories.size(), 1u);
  EXPECT_EQ(mac_activated->directories[0], "/Users/a/.stackie/run");
  mac_spec.socket_path = "run/stackied.sock";
  EXPECT_FALSE(plan_service_install("macos", mac_spec, {{"HOME", "/Users/a"}}, true).ok());
  mac_spec.socket_path.clear();
  EXPECT_FALSE(plan_service_install("macos", mac_spec, {{"HOME", "/Users/a"}}, true).ok());

  EXPECT_FALSE(plan_service_install("windows", plain_spec(), env, false).ok());
  ServiceSpec relative = plain_spec();
  relative.daemon_program = "stackied";
  EXPECT_FALSE(plan_service_install("linux", relative, env, false).ok());
  ServiceSpec newline = plain_spec();
  newline.stackie_home = "/home/a\nExecStartPre=/bin/evil";
  EXPECT_FALSE(plan_service_install("linux", newline, env, false).ok());
}

TEST(ServiceUnits, UninstallPlanCoversEverythingInstallWrites) {
  Environment env{{"HOME", "/home/a"}, {"XDG_CONFIG_HOME", "/cfg"}};
  auto plan = plan_service_uninstall("linux", env);
  ASSERT_TRUE(plan.ok());
  auto written = plan_service_install("linux", plain_spec(), env, true);
  ASSERT_TRUE(written.ok());
  for (const auto& file : written->files)
    EXPECT_NE(std::find(plan->files.begin(), plan->files.end(), file.path), plan->files.end())
        << file.path;
  EXPECT_EQ(plan->enable_links[0], "/cfg/systemd/user/default.target.wants/stackied.service");
  auto mac = plan_service_uninstall("macos", {{"HOME", "/Users/a"}});
  ASSERT_TRUE(mac.ok());
  EXPECT_EQ(mac->files[0], "/Users/a/Library/LaunchAgents/dev.stackie.stackied.plist");
}

TEST(InstallLayout, RelocatedPrefixStripsTheBinDirectory) {
  EXPECT_EQ(relocated_prefix("/usr/local/bin", "bin"), "/usr/local");
  EXPECT_EQ(relocated_prefix("/tmp/dest/usr/bin/", "bin"), "/tmp/dest/usr");
  EXPECT_EQ(relocated_prefix("/opt/st/sbin/x", "sbin/x"), "/opt/st");
  EXPECT_EQ(relocated_prefix("/bin", "bin"), "/");
  EXPECT_EQ(relocated_prefix("/work/build/src", "bin"), "");  // a build tree
  EXPECT_EQ(relocated_prefix("/usr/xbin", "bin"), "");        // a suffix, not a component
  EXPECT_EQ(relocated_prefix("/usr/bin", "/usr/bin"), "");    // an absolute bindir: no prefix
  EXPECT_EQ(relocated_prefix("", "bin"), "");
}

}  // namespace
}  // namespace stackie
