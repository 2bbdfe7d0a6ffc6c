#include "supervisor/block_state.h"

#include <array>

namespace stackie {

namespace {

using S = BlockState;
using E = BlockEvent;

struct Transition {
  S from;
  E event;
  S to;
};

// Every legal move. What is not here is ignored (e.g. `stop` while already stopped).
constexpr std::array kTransitions = {
    Transition{S::created, E::start, S::starting},
    Transition{S::created, E::stop, S::stopped},

    Transition{S::starting, E::ready, S::running},
    Transition{S::starting, E::unhealthy, S::stopping},
    Transition{S::starting, E::stop, S::stopping},
    Transition{S::starting, E::exited_clean, S::stopped},
    Transition{S::starting, E::exited_restart, S::backoff},
    Transition{S::starting, E::exited_failed, S::failed},
    Transition{S::starting, E::setup_failed, S::failed},

    Transition{S::running, E::unhealthy, S::stopping},
    Transition{S::running, E::stop, S::stopping},
    Transition{S::running, E::exited_clean, S::stopped},
    Transition{S::running, E::exited_restart, S::backoff},
    Transition{S::running, E::exited_failed, S::failed},

    // In `stopping` the exit decides: a requested stop ends in `stopped`; a stop forced by a
    // failing health check goes on to the restart policy.
    Transition{S::stopping, E::exited_clean, S::stopped},
    Transition{S::stopping, E::exited_restart, S::backoff},
    Transition{S::stopping, E::exited_failed, S::failed},

    Transition{S::backoff, E::backoff_elapsed, S::starting},
    Transition{S::backoff, E::start, S::starting},
    Transition{S::backoff, E::stop, S::stopped},

    Transition{S::stopped, E::start, S::starting},
    Transition{S::failed, E::start, S::starting},
};

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

std::optional<BlockState> next_state(BlockState from, BlockEvent event) {
  for (const auto& t : kTransitions)
    if (t.from == from && t.event == event) return t.to;
  return std::nullopt;
}

bool has_process(BlockState state) {
  return state == S::starting || state == S::running || state == S::stopping;
}

}  // namespace stackie
