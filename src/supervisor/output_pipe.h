// One of a block process's output pipes (stdout or stderr), read on the daemon's loop into the
// block's logs. It reads until EOF even after the process is gone (data may still be
// buffered), then frees itself; its owner can also close it early.
#pragma once

#include <uv.h>

#include <memory>
#include <vector>

#include "base/uv_handle.h"
#include "supervisor/block_logs.h"

namespace stackie {

class OutputPipe {
 public:
  // Registers itself in `registry` (the owner's list of open pipes) until it closes.
  static OutputPipe* create(uv_loop_t* loop, std::shared_ptr<BlockLogs> logs, LogStream stream,
                            std::vector<OutputPipe*>* registry);
  uv_pipe_t* handle() { return pipe_.get(); }

  void start_reading();
  // Take what is buffered in the pipe now (the process just exited): its last words belong in
  // the failure reason.
  void drain();
  // Stops reading, flushes the unfinished line, leaves the registry; freed once libuv closed it.
  void close();

 private:
  OutputPipe(std::shared_ptr<BlockLogs> logs, LogStream stream, std::vector<OutputPipe*>* registry)
      : logs_(std::move(logs)), stream_(stream), registry_(registry) {}
  void yield_turn();
  // A read of `bytes` took about all the buffer: the block writes faster than one buffer a turn.
  bool filled_the_buffer(size_t bytes) const;
  void grow_for_flood();

  UvHandle<uv_pipe_t> pipe_;
  UvHandle<uv_idle_t> next_turn_;
  int open_handles_ = 2;  // pipe_ and next_turn_: this object is freed once both are closed
  std::shared_ptr<BlockLogs> logs_;
  LogStream stream_;
  std::vector<OutputPipe*>* registry_;
  bool closed_ = false;
  // A quiet block's pipe keeps the kernel's 64 KiB and a buffer of that size. A flooding one
  // gets a pipe of kFloodPipeBytes (the block writes on while we are busy elsewhere, instead of
  // waiting in write(2) for our next turn) and a buffer of kFloodReadBytes, so that a full pipe
  // is taken in a few reads, each still bounded to one per turn (issue 25).
  // The bytes are read into one buffer shared by every pipe of the thread (read_buffer()):
  // a read is split, logged and offered to followers before any other read starts, so no pipe
  // needs a buffer of its own (500 blocks would hold 2 x 64-256 KiB each after a burst).
  static constexpr size_t kQuietReadBytes = 64 * 1024;
  static constexpr size_t kFloodReadBytes = 256 * 1024;
  static constexpr size_t kFloodPipeBytes = 1024 * 1024;
  static char* read_buffer();
  size_t read_size_ = kQuietReadBytes;
};

}  // namespace stackie
