#include "supervisor/block_state.h"

#include <array>

namespace stackie {

namespace {

using S = BlockState;
using E = BlockEvent;

constexpr Step to(S state) {
  return Step{Outcome::move, state, {}};
}
constexpr Step ignore(std::string_view why) {
  return Step{Outcome::ignore, S::created, why};
}
constexpr Step defer(std::string_view why) {
  return Step{Outcome::defer, S::created, why};
}

constexpr std::string_view kNoProcess = "no process runs in this state";
constexpr std::string_view kNoTimer = "no restart delay runs in this state";
constexpr std::string_view kStale = "a late report from the previous run";

// Rows: states in enum order; columns: events in enum order (start, ready, unhealthy, stop,
// exited_clean, exited_restart, exited_failed, setup_failed, backoff_elapsed).
constexpr std::array<std::array<Step, kBlockEventCount>, kBlockStateCount> kTable = {{
    // created: never started
    {to(S::starting), ignore(kNoProcess), ignore(kNoProcess), to(S::stopped), ignore(kNoProcess),
     ignore(kNoProcess), ignore(kNoProcess), ignore(kNoProcess), ignore(kNoTimer)},
    // starting: init or command spawned, not yet ready
    {ignore("already starting"), to(S::running), to(S::stopping), to(S::stopping), to(S::stopped),
     to(S::backoff), to(S::failed), to(S::failed), ignore(kNoTimer)},
    // running
    {ignore("already running"), ignore("already ready"), to(S::stopping), to(S::stopping),
     to(S::stopped), to(S::backoff), to(S::failed), to(S::failed), ignore(kNoTimer)},
    // stopping: the exit decides (a requested stop ends in `stopped`; a stop forced by a
    // failing health check goes on to the restart policy)
    {defer("kept: started once the stop is over"), ignore(kStale), ignore("already stopping"),
     ignore("already stopping: the exit ends it in stopped"), to(S::stopped), to(S::backoff),
     to(S::failed), to(S::failed), ignore(kNoTimer)},
    // stopped
    {to(S::starting), ignore(kStale), ignore(kStale), ignore("already stopped"), ignore(kNoProcess),
     ignore(kNoProcess), ignore(kNoProcess), ignore(kNoProcess), ignore(kNoTimer)},
    // failed
    {to(S::starting), ignore(kStale), ignore(kStale), ignore("already down (failed)"),
     ignore(kNoProcess), ignore(kNoProcess), ignore(kNoProcess), ignore(kNoProcess),
     ignore(kNoTimer)},
    // backoff: waiting for the restart delay, no process
    {to(S::starting), ignore(kStale), ignore(kStale), to(S::stopped), ignore(kNoProcess),
     ignore(kNoProcess), ignore(kNoProcess), ignore(kNoProcess), to(S::starting)},
}};

// Every cell is filled: a move, or a reason not to move.
constexpr bool table_complete() {
  for (const auto& row : kTable)
    for (const auto& cell : row)
      if (cell.outcome != Outcome::move && cell.why.empty()) return false;
  return true;
}
static_assert(table_complete(), "every state x event cell says what it does");

}  // namespace

std::string_view to_string(BlockState state) {
  switch (state) {
    case S::created: return "created";
    case S::starting: return "starting";
    case S::running: return "running";
    case S::stopping: return "stopping";
    case S::stopped: return "stopped";
    case S::failed: return "failed";
    case S::backoff: return "backoff";
  }
  return "?";
}

std::string_view to_string(BlockEvent event) {
  switch (event) {
    case E::start: return "start";
    case E::ready: return "ready";
    case E::unhealthy: return "unhealthy";
    case E::stop: return "stop";
    case E::exited_clean: return "exited-clean";
    case E::exited_restart: return "exited-restart";
    case E::exited_failed: return "exited-failed";
    case E::setup_failed: return "setup-failed";
    case E::backoff_elapsed: return "backoff-elapsed";
  }
  return "?";
}

Step step(BlockState from, BlockEvent event) {
  return kTable[static_cast<std::size_t>(from)][static_cast<std::size_t>(event)];
}

bool has_process(BlockState state) {
  return state == S::starting || state == S::running || state == S::stopping;
}

}  // namespace stackie
