#include "supervisor/heap_trim.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace stackie {

void release_free_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

HeapTrimmer::HeapTrimmer(uv_loop_t* loop, EventBus& events, std::function<void()> trim)
    : events_(events), trim_(std::move(trim)) {
  // Cannot fail: it only fills in the handle.
  timer_.init([loop](uv_timer_t* t) { return uv_timer_init(loop, t); }, this);
  // Never what keeps the loop running: a daemon that is stopping exits at once, not after a
  // trim nobody needs (a new daemon waits for its lock).
  uv_unref(reinterpret_cast<uv_handle_t*>(timer_.get()));
  // The first event of a burst arms the timer and later ones leave it be: a long burst (an
  // `up` of 500 blocks) is trimmed every kQuietMs while it lasts, which keeps its peak down,
  // and once more after its last event.
  subscription_ = events_.subscribe([this](const BusEvent&) {
    if (uv_is_active(reinterpret_cast<uv_handle_t*>(timer_.get()))) return;
    uv_timer_start(
        timer_.get(),
        [](uv_timer_t* t) {
          if (auto* self = static_cast<HeapTrimmer*>(t->data)) self->trim_();
        },
        kQuietMs, 0);
  });
}

HeapTrimmer::~HeapTrimmer() {
  events_.unsubscribe(subscription_);
}

}  // namespace stackie
