// The Windows backend (DESIGN.md §1, §5b): carries out a RestrictedTokenPlan. Compiled only for
// Windows (sandbox=restricted-token) and in the mingw-w64 cross build under tests/windows/.
// No libuv here: the exit callback runs on a thread-pool thread and the daemon bridges it to
// its loop with uv_async_send (the only thread-safe libuv call).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "sandbox/restricted_token_plan.h"

namespace stackie {

// The block's stdio, as Windows HANDLEs (void* so this header needs no <windows.h>). They need
// not be inheritable: the backend duplicates them into the only handles the child inherits.
struct WindowsStdio {
  void* input = nullptr;
  void* output = nullptr;
  void* error = nullptr;
};

// Writes the plan's ACLs on the granted paths: protected DACLs on the directories Stackie made,
// merged ACEs on the user's paths. Each path is opened as itself and its DACL set through the
// handle; a path that is a junction or link, or reached through one, is refused by name (a block
// may have planted it in its project to redirect the grant). The monitor does this before the
// block starts.
Status apply_path_acls(const RestrictedTokenPlan& plan);

// Undoes them where the plan merged (plan_acl_revocations): the explicit ACEs of the block SID
// go, and Windows recomputes what the path passes on below. A path that is gone is skipped, one
// that is now a link is refused as above; the first failure is returned after every path was
// tried.
Status revoke_path_acls(const RestrictedTokenPlan& plan);

// `acl` (a Windows ACL) without the explicit ACEs, allow or deny, of `sid`: the new ACL's bytes
// and how many ACEs went. Inherited ACEs stay (the parent's, recomputed by Windows anyway).
struct AclEdit {
  std::vector<uint8_t> acl;
  size_t removed = 0;
};
Result<AclEdit> acl_without_sid(const void* acl, const std::string& sid);

class RestrictedProcess {
 public:
  // Called once, on a Windows thread-pool thread, with the exit code of the block's process.
  using ExitCallback = std::function<void(uint32_t exit_code)>;

  // Unregisters the exit wait (waiting for a running callback) and closes the job, which kills
  // every process still in it (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE).
  ~RestrictedProcess();
  RestrictedProcess(const RestrictedProcess&) = delete;
  RestrictedProcess& operator=(const RestrictedProcess&) = delete;

  uint32_t pid() const { return pid_; }
  // Kills the whole tree now (TerminateJobObject); the exit callback still runs.
  Status terminate(uint32_t exit_code);
  // Asks the block to stop: CTRL_BREAK to its process group. The block leads a new group on a
  // windowless console of its own, and only a process attached to that console can send the
  // event: this process leaves its own console (if any) for the block's, sends, and leaves.
  // Fails where the event cannot be delivered (Wine 8.0 does not implement it).
  Status interrupt();
  // Ends every process left in the job and returns once it holds none, ending them again every
  // 100 ms (Wine 8 was seen to leave a block's process running after a job's end), or after
  // `timeout_ms` with an error naming how many are left. The block's own exit does not wait for
  // its children; the monitor's exit, which the daemon reports as the block's, must.
  Status end_job(uint32_t exit_code, uint32_t timeout_ms);
  // Closes the job handle: the kernel kills every process in the job.
  void close_job();
  // The job's JOB_OBJECT_UILIMIT_* flags, as Windows reports them (tests check they are set).
  Result<uint32_t> ui_restrictions() const;

  // Reads the exit code and runs the callback: called by the wait registered at spawn.
  void deliver_exit();

 private:
  friend Result<std::unique_ptr<RestrictedProcess>> spawn_restricted(
      const RestrictedTokenPlan&, const std::vector<std::string>&, const WindowsStdio&,
      ExitCallback);
  RestrictedProcess() = default;

  void* job_ = nullptr;
  void* process_ = nullptr;
  void* desktop_ = nullptr;  // HDESK of the block's own desktop (RestrictedTokenPlan::desktop)
  void* wait_ = nullptr;
  uint32_t pid_ = 0;
  ExitCallback on_exit_;
};

// The JOB_OBJECT_UILIMIT_* flags every block's job gets.
uint32_t expected_job_ui_restrictions();

// Creates the restricted token, the job and the process (suspended, stdio-only handle list),
// assigns it to the job, then resumes it. argv[0] is the program (a full path, or found the way
// CreateProcess finds a program); the environment and working directory come from the plan.
Result<std::unique_ptr<RestrictedProcess>> spawn_restricted(
    const RestrictedTokenPlan& plan, const std::vector<std::string>& argv,
    const WindowsStdio& stdio, RestrictedProcess::ExitCallback on_exit);

}  // namespace stackie
