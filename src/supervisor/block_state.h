// A block's lifecycle as a table-driven state machine (DESIGN.md §7). The table in
// block_state.cc is the only place transitions are defined; BlockRunner asks it before moving.
#pragma once

#include <optional>
#include <string_view>

namespace stackie {

enum class BlockState { created, starting, running, stopping, stopped, failed, backoff };

enum class BlockEvent {
  start,            // asked to run (first start, `start`, a re-apply)
  ready,            // health check passed (or alive for start_period without one)
  unhealthy,        // health failures reached `retries`: stop it, then restart per policy
  stop,             // asked to stop (`down`, `stop`, daemon shutdown)
  exited_clean,     // gone, nothing more to do (success, or stopped on purpose)
  exited_restart,   // gone, the restart policy wants another attempt
  exited_failed,    // gone for good: a failure with no restart left
  setup_failed,     // spawn or sandbox setup or an init step failed
  backoff_elapsed,  // the restart delay is over
};

// The one to_string table for states, shared by IPC, logs and `ps`.
std::string_view to_string(BlockState state);
std::string_view to_string(BlockEvent event);

// The next state, or nullopt when the event means nothing in this state (the caller ignores it).
std::optional<BlockState> next_state(BlockState from, BlockEvent event);

// True for states in which a block process (or its init) may be alive.
bool has_process(BlockState state);

}  // namespace stackie
