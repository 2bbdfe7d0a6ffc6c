// Runs the Windows backend for real (under Wine in CI): spawns children through
// spawn_restricted() and checks TEMP/TMP redirection, exit-code delivery through the wait
// callback, and that closing the job kills a child's own child. Prints one "ok"/"FAIL" line per
// check and exits 1 if any failed. The same .exe is the child: `child-env`, `child-tree`,
// `child-exit`, `grandchild` select its role.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// after windows.h
#include <sddl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sandbox/restricted_token_plan.h"
#include "sandbox/restricted_token_spawn.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

std::string narrow(const wchar_t* text) {
  int size = WideCharToMultiByte(CP_UTF8, 0, text, -1, nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<size_t>(size > 0 ? size - 1 : 0), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text, -1, out.data(), size, nullptr, nullptr);
  return out;
}

std::string env(const char* name) {
  char value[1024];
  DWORD n = GetEnvironmentVariableA(name, value, sizeof value);
  return n > 0 && n < sizeof value ? std::string(value, n) : std::string("<unset>");
}

std::string self_path() {
  wchar_t path[MAX_PATH];
  GetModuleFileNameW(nullptr, path, MAX_PATH);
  return narrow(path);
}

// --- child roles -------------------------------------------------------------------------------

int child_env(const char* stray_handle, const char* tricky_argument) {
  std::printf("ARG=[%s]\n", tricky_argument);
  // The parent's inheritable event, by value. If the child inherited it, SetEvent signals the
  // parent's event; with the stdio-only handle list the value means nothing here (or names some
  // other object of ours, which SetEvent refuses unless it is an event we own).
  HANDLE stray =
      reinterpret_cast<HANDLE>(static_cast<uintptr_t>(std::strtoull(stray_handle, nullptr, 10)));
  std::printf("STRAY_SET=%d\n", SetEvent(stray) ? 1 : 0);
  HANDLE token = nullptr;
  OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token);
  std::printf("TEMP=%s\nTMP=%s\nRESTRICTED=%d\nUSERPROFILE=%s\n", env("TEMP").c_str(),
              env("TMP").c_str(), token && IsTokenRestricted(token) ? 1 : 0,
              env("USERPROFILE").c_str());
  // The desktop this process's threads run on: the block's own (RestrictedTokenPlan::desktop).
  char desktop[256] = "<unknown>";
  DWORD needed = 0;
  GetUserObjectInformationA(GetThreadDesktop(GetCurrentThreadId()), UOI_NAME, desktop,
                            sizeof desktop, &needed);
  std::printf("DESKTOP=%s\n", desktop);
  std::fflush(stdout);
  return 42;
}

// `linger`: sleeps until the job is killed; otherwise exits 3 s after writing the pid file (time
// for a test to open the grandchild), leaving the grandchild running.
int child_tree(const char* pid_file, bool linger) {
  STARTUPINFOA startup{};
  startup.cb = sizeof startup;
  PROCESS_INFORMATION info{};
  std::string line = "\"" + self_path() + "\" grandchild";
  if (!CreateProcessA(nullptr, line.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &startup,
                      &info))
    return 3;
  FILE* out = std::fopen(pid_file, "w");
  if (!out) return 4;
  std::fprintf(out, "%lu\n", info.dwProcessId);
  std::fclose(out);
  if (!linger) {
    Sleep(3000);
    return 0;
  }
  Sleep(60000);  // killed with the job long before
  return 5;
}

// --- the test ----------------------------------------------------------------------------------

struct ExitSignal {
  HANDLE event = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  volatile LONG code = -1;
  ~ExitSignal() { CloseHandle(event); }
  stackie::RestrictedProcess::ExitCallback callback() {
    return [this](uint32_t exit_code) {
      InterlockedExchange(&code, static_cast<LONG>(exit_code));
      SetEvent(event);
    };
  }
};

std::string make_block_dir() {
  char base[MAX_PATH];
  GetTempPathA(MAX_PATH, base);
  std::string root = std::string(base) + "stackie-wine-" + std::to_string(GetCurrentProcessId());
  CreateDirectoryA(root.c_str(), nullptr);
  std::string tmp = root + "\\tmp-wine-test";
  CreateDirectoryA(tmp.c_str(), nullptr);
  return tmp;
}

stackie::RestrictedTokenPlan make_plan(const std::string& tmp) {
  stackie::SandboxPolicy policy;
  policy.name = "wine-test";
  policy.host_tmp_dir = tmp;
  std::string exe = self_path();
  policy.read_only = {{exe.substr(0, exe.find_last_of('\\')), ""}};
  policy.environment = {{"TEMP", "C:\\caller-temp-must-not-pass"}, {"STACKIE_BLOCK", "wine-test"}};
  stackie::Result<stackie::RestrictedTokenPlan> plan = stackie::plan_restricted_token(policy);
  check(plan.ok(), "plan_restricted_token");
  return plan.ok() ? *plan : stackie::RestrictedTokenPlan{};
}

void test_env_and_exit_code(const stackie::RestrictedTokenPlan& plan, const std::string& tmp) {
  SECURITY_ATTRIBUTES inheritable{sizeof inheritable, nullptr, TRUE};
  HANDLE read_end = nullptr, write_end = nullptr;
  CreatePipe(&read_end, &write_end, &inheritable, 0);
  SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
  // An inheritable handle NOT in the stdio list: the child must not get it.
  HANDLE stray = CreateEventW(&inheritable, TRUE, FALSE, nullptr);

  // A desktop of the plan's name made beforehand, open to everyone (a NULL DACL): the block
  // must not be put on it.
  SECURITY_DESCRIPTOR open_to_all;
  InitializeSecurityDescriptor(&open_to_all, SECURITY_DESCRIPTOR_REVISION);
  SetSecurityDescriptorDacl(&open_to_all, TRUE, nullptr, FALSE);
  SECURITY_ATTRIBUTES open_attributes{sizeof open_attributes, &open_to_all, FALSE};
  HDESK premade =
      CreateDesktopA(plan.desktop.name.c_str(), nullptr, nullptr, 0, GENERIC_ALL, &open_attributes);
  check(premade != nullptr, "a desktop of the plan's name, open to all, made beforehand");

  ExitSignal exited;
  stackie::WindowsStdio stdio{GetStdHandle(STD_INPUT_HANDLE), write_end, write_end};
  const std::string stray_value = std::to_string(reinterpret_cast<uintptr_t>(stray));
  const std::string tricky = "a \"quoted\" arg\\ with \\\" and trailing\\";
  auto child = stackie::spawn_restricted(plan, {self_path(), "child-env", stray_value, tricky},
                                         stdio, exited.callback());
  CloseHandle(write_end);
  check(child.ok(),
        "spawn_restricted child-env" + (child.ok() ? std::string() : ": " + child.error().message));
  if (!child.ok()) {
    CloseHandle(read_end);
    CloseHandle(stray);
    return;
  }
  std::string output;
  char buffer[512];
  DWORD got = 0;
  while (ReadFile(read_end, buffer, sizeof buffer, &got, nullptr) && got > 0)
    output.append(buffer, got);
  CloseHandle(read_end);
  std::printf("---- child output ----\n%s----------------------\n", output.c_str());
  check(output.find("TEMP=" + tmp + "\r\n") != std::string::npos ||
            output.find("TEMP=" + tmp + "\n") != std::string::npos,
        "child sees TEMP=" + tmp);
  check(output.find("TMP=" + tmp) != std::string::npos, "child sees TMP=" + tmp);
  check(output.find("caller-temp-must-not-pass") == std::string::npos,
        "the policy's own TEMP does not pass");
  check(output.find("USERPROFILE=<unset>") != std::string::npos,
        "the caller's environment does not pass (USERPROFILE unset)");
  check(output.find("ARG=[" + tricky + "]") != std::string::npos,
        "argv survives windows_command_line and the C runtime's split");
  // "DESKTOP=<plan's name>-<16 hex digits>": a desktop of its own, not the one made beforehand.
  const size_t at = output.find("DESKTOP=" + plan.desktop.name + "-");
  const size_t end = output.find_first_of("\r\n", at);
  const std::string suffix = at == std::string::npos || end == std::string::npos
                                 ? std::string()
                                 : output.substr(at + 9 + plan.desktop.name.size(),
                                                 end - (at + 9 + plan.desktop.name.size()));
  check(suffix.size() == 16 && suffix.find_first_not_of("0123456789abcdef") == std::string::npos,
        "the child runs on a desktop of its own, " + plan.desktop.name +
            "-<64 random bits>, not the one made beforehand (suffix '" + suffix + "')");
  if (premade) CloseDesktop(premade);
  check(WaitForSingleObject(stray, 0) == WAIT_TIMEOUT,
        "an inheritable handle outside the stdio list is not inherited");
  check(WaitForSingleObject(exited.event, 10000) == WAIT_OBJECT_0,
        "exit delivered through the wait callback");
  check(exited.code == 42, "exit code 42 read (got " + std::to_string(exited.code) + ")");
  CloseHandle(stray);
  std::printf("info token restricted in child: %s\n",
              output.find("RESTRICTED=1") != std::string::npos ? "yes" : "no");
}

void test_job_kills_grandchild(const stackie::RestrictedTokenPlan& plan, const std::string& tmp) {
  const std::string pid_file = tmp + "\\grandchild.pid";
  DeleteFileA(pid_file.c_str());
  ExitSignal exited;
  HANDLE nul =
      CreateFileA("NUL", GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING, 0, nullptr);
  stackie::WindowsStdio stdio{nul, nul, nul};
  auto child = stackie::spawn_restricted(plan, {self_path(), "child-tree", pid_file}, stdio,
                                         exited.callback());
  CloseHandle(nul);
  check(child.ok(), "spawn_restricted child-tree" +
                        (child.ok() ? std::string() : ": " + child.error().message));
  if (!child.ok()) return;

  DWORD grandchild_pid = 0;
  for (int i = 0; i < 1200 && grandchild_pid == 0; ++i) {  // up to 60 s: Wine can be slow
    if (FILE* in = std::fopen(pid_file.c_str(), "r")) {
      unsigned long pid = 0;
      if (std::fscanf(in, "%lu", &pid) == 1) grandchild_pid = pid;
      std::fclose(in);
    }
    if (grandchild_pid == 0) Sleep(50);
  }
  check(grandchild_pid != 0, "the child started a grandchild");
  if (grandchild_pid == 0) return;
  HANDLE grandchild =
      OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, grandchild_pid);
  check(grandchild != nullptr, "grandchild can be opened");
  if (!grandchild) return;
  check(WaitForSingleObject(grandchild, 0) == WAIT_TIMEOUT, "grandchild is running");
  stackie::Result<uint32_t> ui = (*child)->ui_restrictions();
  if (!ui.ok() && ui.error().code == -static_cast<int>(ERROR_INVALID_FUNCTION))
    std::printf(
        "skip the job's UI limits cannot be read back on this host (Wine does not "
        "implement the JobObjectBasicUIRestrictions query; setting them succeeded)\n");
  else
    check(ui.ok() && *ui == stackie::expected_job_ui_restrictions(),
          "the job carries the UI limits (no handles to the user's windows, no clipboard, no "
          "global atoms, no settings, no logoff, no desktop switch): " +
              (ui.ok() ? std::to_string(*ui) : ui.error().message));
  (*child)->close_job();
  check(WaitForSingleObject(grandchild, 10000) == WAIT_OBJECT_0,
        "closing the job killed the grandchild");
  check(WaitForSingleObject(exited.event, 10000) == WAIT_OBJECT_0,
        "closing the job killed the child (exit delivered)");
  CloseHandle(grandchild);
}

// The block's `limits:` in its job (memory, process count, CPU rate): Windows accepts them and
// the block runs under them. That they bite is not shown here: Wine 8 stores a job's limits but
// does not enforce them (a job of one process still lets the block start a second one), so the
// README's platform table lists their enforcement under real Windows, unchecked. A CPU limit
// Wine refuses outright (no JobObjectCpuRateControlInformation): the spawn must then fail and
// say so, never run the block without it.
void test_job_limits(stackie::RestrictedTokenPlan plan) {
  plan.job_limits = {256ull << 20, 8, 500};
  {
    ExitSignal exited;
    auto child =
        stackie::spawn_restricted(plan, {self_path(), "child-exit"}, {}, exited.callback());
    if (child.ok())
      check(WaitForSingleObject(exited.event, 60000) == WAIT_OBJECT_0 && exited.code == 7,
            "the block ran in a job capped at 0.5 CPU");
    else
      check(child.error().message.find("JobObjectCpuRateControlInformation") != std::string::npos,
            "a CPU cap this host refuses fails the spawn and names it: " + child.error().message);
  }
  plan.job_limits.cpu_millis = 0;
  ExitSignal exited;
  HANDLE nul =
      CreateFileA("NUL", GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING, 0, nullptr);
  stackie::WindowsStdio stdio{nul, nul, nul};
  auto child =
      stackie::spawn_restricted(plan, {self_path(), "child-exit"}, stdio, exited.callback());
  CloseHandle(nul);
  check(child.ok(), "spawn_restricted with job limits (memory 256 MiB, 8 processes)" +
                        (child.ok() ? std::string() : ": " + child.error().message));
  if (!child.ok()) return;
  bool done = WaitForSingleObject(exited.event, 60000) == WAIT_OBJECT_0;
  check(done && exited.code == 7,
        "the block ran in the limited job (exit " + std::to_string(exited.code) + ", want 7)");
}

// Revoking a block's grants (issue 18) takes the block SID's explicit ACEs, allow and deny,
// out of an ACL, and nothing else: not another SID's, not an inherited one. Wine keeps no DACL
// on its files, so the edit is checked here on an ACL in memory, the revocation list by the
// access-check model (TokenIsolation.TheProjectDirectory...).
void test_acl_without_block_sid(const stackie::RestrictedTokenPlan& plan) {
  PSID block = nullptr, users = nullptr;
  check(ConvertStringSidToSidA(plan.block_sid.c_str(), &block) &&
            ConvertStringSidToSidA("S-1-5-32-545", &users),
        "revoke: the SIDs convert");
  if (!block || !users) return;
  std::vector<BYTE> buffer(1024);
  auto* acl = reinterpret_cast<PACL>(buffer.data());
  InitializeAcl(acl, static_cast<DWORD>(buffer.size()), ACL_REVISION);
  const DWORD inherit = OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE;
  AddAccessDeniedAceEx(acl, ACL_REVISION, inherit, FILE_WRITE_DATA, block);
  AddAccessAllowedAceEx(acl, ACL_REVISION, inherit, FILE_GENERIC_READ, users);
  AddAccessAllowedAceEx(acl, ACL_REVISION, inherit, FILE_GENERIC_READ, block);
  AddAccessAllowedAceEx(acl, ACL_REVISION, INHERITED_ACE, FILE_GENERIC_READ, block);
  auto edit = stackie::acl_without_sid(acl, plan.block_sid);
  check(edit.ok(), "revoke: acl_without_sid" + (edit.ok() ? "" : ": " + edit.error().message));
  if (edit.ok()) {
    auto* out = reinterpret_cast<PACL>(edit->acl.data());
    check(edit->removed == 2 && out->AceCount == 2,
          "revoke: the block's two explicit ACEs went, two ACEs stay (removed " +
              std::to_string(edit->removed) + ", left " + std::to_string(out->AceCount) + ")");
    void* first = nullptr;
    void* second = nullptr;
    if (out->AceCount == 2 && GetAce(out, 0, &first) && GetAce(out, 1, &second)) {
      auto* kept_users = static_cast<ACCESS_ALLOWED_ACE*>(first);
      auto* kept_inherited = static_cast<ACCESS_ALLOWED_ACE*>(second);
      check(EqualSid(&kept_users->SidStart, users) && kept_users->Mask == FILE_GENERIC_READ &&
                EqualSid(&kept_inherited->SidStart, block) &&
                (kept_inherited->Header.AceFlags & INHERITED_ACE),
            "revoke: Users' ACE and the inherited one stay, in order");
    }
  }
  auto other = stackie::acl_without_sid(acl, "S-1-5-32-544");
  check(other.ok() && other->removed == 0, "revoke: a SID with no ACE removes nothing");
  LocalFree(block);
  LocalFree(users);
}

// Grants on paths a first-party block may have replaced (issue 18): its project directory is
// writable, so a read-only path in it, or a directory on the way to one, may now be a link to a
// folder of the user's. The grant must be refused, naming the path, and never land on the
// link's target; so must the revocation. A plain path in the same project is granted. Wine keeps
// no DACL on files, so what is checked is that the link is refused.
void test_grants_refuse_links(const stackie::RestrictedTokenPlan& base, const std::string& dir) {
  auto grant_on = [&](const std::string& path) {
    stackie::RestrictedTokenPlan plan = base;
    stackie::PathAcl read_only;
    read_only.path = path;
    read_only.is_protected = false;
    read_only.entries = {{stackie::AclEntry::Type::allow, stackie::Principal::of(base.block_sid),
                          stackie::access::kReadExecute,
                          stackie::kObjectInherit | stackie::kContainerInherit}};
    plan.path_acls = {read_only};
    return plan;
  };
  const std::string project = dir + "\\project";
  stackie::Status plain = stackie::apply_path_acls(grant_on(project + "\\docs"));
  check(plain.ok(), "grant: a plain directory of the project is granted" +
                        (plain.ok() ? "" : ": " + plain.error().message));
  for (const char* planted : {"planted", "via\\secrets"}) {
    const std::string path = project + "\\" + planted;
    stackie::Status granted = stackie::apply_path_acls(grant_on(path));
    check(!granted.ok() && granted.error().message.find(path) != std::string::npos &&
              granted.error().message.find("link") != std::string::npos,
          std::string("grant: refused on ") + planted + " (a link to the user's folder): " +
              (granted.ok() ? "granted" : granted.error().message));
    stackie::Status revoked = stackie::revoke_path_acls(grant_on(path));
    check(!revoked.ok() && revoked.error().message.find("link") != std::string::npos,
          std::string("revoke: refused on ") + planted + ": " +
              (revoked.ok() ? "revoked" : revoked.error().message));
  }
  stackie::Status plain_file = stackie::apply_path_acls(grant_on(project + "\\notes.txt"));
  check(plain_file.ok(), "grant: a plain file of the project is granted" +
                             (plain_file.ok() ? "" : ": " + plain_file.error().message));
  const std::string linked = project + "\\stack.yml";
  stackie::Status hard = stackie::apply_path_acls(grant_on(linked));
  check(!hard.ok() && hard.error().message.find("hard links") != std::string::npos,
        "grant: refused on a hard link to a file of the user's: " +
            (hard.ok() ? "granted" : hard.error().message));
  stackie::Status gone = stackie::revoke_path_acls(grant_on(project + "\\no-such-dir"));
  check(gone.ok(),
        "revoke: a path that is gone is skipped" + (gone.ok() ? "" : ": " + gone.error().message));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "child-env") return child_env(argv[2], argv[3]);
  if (argc >= 3 && std::string(argv[1]) == "child-tree") return child_tree(argv[2], true);
  if (argc >= 3 && std::string(argv[1]) == "child-tree-exit") return child_tree(argv[2], false);
  if (argc >= 2 && std::string(argv[1]) == "child-exit") return 7;
  if (argc >= 2 && std::string(argv[1]) == "grandchild") {
    Sleep(60000);
    return 6;
  }
  std::string tmp = make_block_dir();
  stackie::RestrictedTokenPlan plan = make_plan(tmp);
  std::printf("info block SID %s\n", plan.block_sid.c_str());
  stackie::Status acls = stackie::apply_path_acls(plan);
  std::printf("info apply_path_acls: %s\n", acls.ok() ? "ok" : acls.error().message.c_str());
  check(acls.ok(), "apply_path_acls");
  test_env_and_exit_code(plan, tmp);
  test_job_kills_grandchild(plan, tmp);
  test_job_limits(plan);
  test_acl_without_block_sid(plan);
  if (argc >= 3 && std::string(argv[1]) == "--plants") test_grants_refuse_links(plan, argv[2]);
  std::printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
