#include "supervisor/output_pipe.h"

#include <algorithm>

#include "supervisor/host_os.h"

namespace stackie {

OutputPipe* OutputPipe::create(uv_loop_t* loop, std::shared_ptr<BlockLogs> logs, LogStream stream,
                               std::vector<OutputPipe*>* registry) {
  auto* pipe = new OutputPipe(std::move(logs), stream, registry);
  // Neither init can fail: both only fill in the handle.
  pipe->pipe_.init([loop](uv_pipe_t* h) { return uv_pipe_init(loop, h, 0); }, pipe);
  pipe->next_turn_.init([loop](uv_idle_t* h) { return uv_idle_init(loop, h); }, pipe);
  registry->push_back(pipe);
  return pipe;
}

void OutputPipe::start_reading() {
  uv_read_start(
      pipe_.stream(),
      [](uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto* self = static_cast<OutputPipe*>(h->data);
        *buf = uv_buf_init(read_buffer(), static_cast<unsigned>(self->read_size_));
      },
      [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
        auto* self = static_cast<OutputPipe*>(s->data);
        if (n > 0) {
          self->logs_->feed(self->stream_, std::string_view(buf->base, size_t(n)));
          if (self->filled_the_buffer(size_t(n))) self->grow_for_flood();
          self->yield_turn();
        }
        if (n < 0) self->close();  // EOF or error: the last writer is gone
      });
}

// One buffer per pipe per loop turn: libuv would read a busy pipe up to 32 times in a row, and
// a block flooding its output (2 MiB of lines to split, log and offer to followers) would then
// keep clients and health checks waiting for a whole turn (issue 10: ps within 100 ms during a
// flood). Reading resumes at the next turn, after the other ready handles ran.
void OutputPipe::yield_turn() {
  if (closed_) return;
  uv_read_stop(pipe_.stream());
  uv_idle_start(next_turn_.get(), [](uv_idle_t* idle) {
    auto* self = static_cast<OutputPipe*>(idle->data);
    uv_idle_stop(idle);
    if (!self->closed_) self->start_reading();
  });
}

// A full pipe of the kernel's 16 pages holds less than 64 KiB when the block's writes do not
// end on page boundaries: a write that does not fit in the last page's room starts a page of its
// own (bench-spew's 65500-byte writes leave reads of 63-64 KB). So a read within a page of the
// buffer counts as a full one; with nothing but `== read_size_`, a flooding block's pipe never
// grew (once the daemon used pipes rather than libuv's socketpairs, whose buffer is larger).
bool OutputPipe::filled_the_buffer(size_t bytes) const {
  constexpr size_t kPage = 4096;
  return bytes + kPage > read_size_;
}

// Once per pipe: a refused F_SETPIPE_SZ (the user's pipe pages, /proc/sys/fs/pipe-user-pages-soft,
// are used up by other floods) keeps the 64 KiB pipe, and the bigger buffer still takes what
// the pipe holds in fewer reads.
void OutputPipe::grow_for_flood() {
  if (read_size_ >= kFloodReadBytes) return;
  grow_pipe_to(pipe_.get(), kFloodPipeBytes);
  read_size_ = kFloodReadBytes;
}

// libuv calls the allocation and the read callback back to back for one pipe, on the loop's
// thread; so does drain(). Pages of it never touched cost nothing (a 256 KiB block is mmap'd).
char* OutputPipe::read_buffer() {
  thread_local std::unique_ptr<char[]> buffer(new char[kFloodReadBytes]);
  return buffer.get();
}

void OutputPipe::drain() {
  if (closed_) return;
  for (int rounds = 0; rounds < 16; ++rounds) {  // bounded: a grandchild may keep writing
    size_t n = read_pipe_now(pipe_.get(), read_buffer(), read_size_);
    if (n == 0) break;
    logs_->feed(stream_, std::string_view(read_buffer(), n));
  }
}

void OutputPipe::close() {
  if (closed_) return;
  closed_ = true;
  logs_->end_of_stream(stream_);
  if (registry_ != nullptr) std::erase(*registry_, this);
  registry_ = nullptr;
  auto closed = [this] {
    if (--open_handles_ == 0) delete this;
  };
  next_turn_.close(closed);
  pipe_.close(closed);
}

}  // namespace stackie
