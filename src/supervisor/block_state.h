// A block's lifecycle as a table-driven state machine (DESIGN.md §7). The table in
// block_state.cc is the only place transitions are defined, and it has a cell for every state
// and event: a move, an event that means nothing there (said why), or a start kept until the
// current stop is over. Nothing falls through a missing cell: tests/supervisor/unit_test.cc
// checks all of them against a table of its own.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace stackie {

enum class BlockState { created, starting, running, stopping, stopped, failed, backoff };
inline constexpr std::size_t kBlockStateCount = 7;

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
inline constexpr std::size_t kBlockEventCount = 9;

// Why a block in `stopping` is stopping; it decides what its exit leads to.
enum class StopCause {
  none,       // not stopping
  requested,  // `stop`, `down`, shutdown: the exit ends in `stopped`
  unhealthy,  // its health check failed: the exit goes to the restart policy
};

// The one to_string table for states, shared by IPC, logs and `ps`.
std::string_view to_string(BlockState state);
std::string_view to_string(BlockEvent event);

// What an event does in a state: every cell of the table is one of these.
enum class Outcome {
  move,    // to `to`
  ignore,  // nothing to do (`why` says so): e.g. a stop of a block already stopped
  defer,   // kept, and done once the current transition is over (a start while stopping)
};
struct Step {
  Outcome outcome = Outcome::ignore;
  BlockState to = BlockState::created;  // for Outcome::move
  std::string_view why;                 // for ignore and defer
};

Step step(BlockState from, BlockEvent event);

// The next state, or nullopt when the cell is not a move.
inline std::optional<BlockState> next_state(BlockState from, BlockEvent event) {
  Step s = step(from, event);
  return s.outcome == Outcome::move ? std::optional<BlockState>(s.to) : std::nullopt;
}

// True for states in which a block process (or its init) may be alive.
bool has_process(BlockState state);

}  // namespace stackie
