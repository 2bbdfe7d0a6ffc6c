// Gives the heap's free pages back to the kernel once the daemon has gone quiet after a change
// of its blocks (issue 25: the daemon's RSS at hundreds of blocks). Spawning a block allocates
// and frees a few KiB of temporaries (its policy as JSON, argv, pipes) between objects that
// live as long as the block; glibc only returns free memory at the top of the heap, so the
// holes stay resident: about 6 KiB per block, and all of a stack's memory after its `down`.
// A trim kQuietMs after a block event (and every kQuietMs while events go on) costs a wake-up
// or a few per burst of activity, and nothing while nothing happens (bench/idle).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>

#include "base/uv_handle.h"
#include "supervisor/event_bus.h"

namespace stackie {

// malloc_trim(0) where the C library has it (glibc); nothing elsewhere.
void release_free_heap();

class HeapTrimmer {
 public:
  static constexpr uint64_t kQuietMs = 500;
  // `trim` is release_free_heap in the daemon; tests count its calls.
  HeapTrimmer(uv_loop_t* loop, EventBus& events, std::function<void()> trim = release_free_heap);
  ~HeapTrimmer();
  HeapTrimmer(const HeapTrimmer&) = delete;
  HeapTrimmer& operator=(const HeapTrimmer&) = delete;

 private:
  EventBus& events_;
  uint64_t subscription_ = 0;
  std::function<void()> trim_;
  UvHandle<uv_timer_t> timer_;
};

}  // namespace stackie
