// The one RAII owner of a libuv handle (DESIGN.md §8). libuv keeps using a handle until its close
// callback has run, so the memory lives on the heap and is freed there, never in a destructor.
// Owners clear handle->data when they let go, so a late callback finds no owner to call back.
// An owner that must itself outlive the close (an fd to close only once its poll handle is
// gone, an object that frees itself after its last handle) passes a `closed` callback.
#pragma once

#include <uv.h>

#include <cassert>
#include <concepts>
#include <functional>
#include <memory>
#include <utility>

namespace stackie {

template <typename T>
class UvHandle {
 public:
  UvHandle() = default;
  ~UvHandle() { close(); }
  UvHandle(UvHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UvHandle& operator=(UvHandle&& other) noexcept {
    if (this != &other) {
      close();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  UvHandle(const UvHandle&) = delete;
  UvHandle& operator=(const UvHandle&) = delete;

  // Allocates the handle and runs `init(T*)` (a uv_*_init call); on failure the handle was never
  // registered with the loop, so it is simply freed. Returns init's libuv status.
  template <typename Init>
  int init(Init&& init_handle, void* data) {
    assert(!handle_);
    T* handle = new T{};
    const int status = std::forward<Init>(init_handle)(handle);
    if (status < 0) {
      delete handle;
      return status;
    }
    handle->data = data;
    handle_ = handle;
    return 0;
  }

  // uv_spawn, which initialises the handle even when it fails: then the handle is closed (and
  // freed) here. Returns uv_spawn's status.
  int spawn(uv_loop_t* loop, const uv_process_options_t& options,
            void* data) requires std::same_as<T, uv_process_t> {
    assert(!handle_);
    T* process = new T{};
    process->data = data;
    const int status = uv_spawn(loop, process, &options);
    if (status < 0) {
      process->data = nullptr;
      uv_close(reinterpret_cast<uv_handle_t*>(process),
               [](uv_handle_t* closed) { delete reinterpret_cast<T*>(closed); });
      return status;
    }
    handle_ = process;
    return 0;
  }

  T* get() const { return handle_; }
  uv_stream_t* stream() const { return reinterpret_cast<uv_stream_t*>(handle_); }
  uv_handle_t* handle() const { return reinterpret_cast<uv_handle_t*>(handle_); }
  explicit operator bool() const { return handle_ != nullptr; }

  // Starts closing; the memory goes in the close callback. Idempotent.
  void close() {
    if (!handle_) return;
    uv_handle_t* handle = this->handle();
    handle_ = nullptr;
    handle->data = nullptr;
    uv_close(handle, [](uv_handle_t* closed) { delete reinterpret_cast<T*>(closed); });
  }

  // Starts closing; `closed` runs once libuv is done with the handle (its memory is already
  // freed then). Nothing happens when there is no handle.
  void close(std::function<void()> closed) {
    if (!handle_) return;
    uv_handle_t* handle = prepare_close(std::move(closed));
    uv_close(handle, run_closed);
  }

  // A TCP handle closed with an RST (SO_LINGER 0) so the peer learns the connection broke;
  // a socket that cannot be reset (one still connecting) is closed plainly.
  void close_reset(std::function<void()> closed) requires std::same_as<T, uv_tcp_t> {
    if (!handle_) return;
    T* tcp = handle_;
    uv_handle_t* handle = prepare_close(std::move(closed));
    if (uv_tcp_close_reset(tcp, run_closed) != 0) uv_close(handle, run_closed);
  }

 private:
  using Closed = std::function<void()>;

  // Hands the handle over to its close: data now holds the callback for run_closed.
  uv_handle_t* prepare_close(Closed closed) {
    uv_handle_t* handle = this->handle();
    handle_ = nullptr;
    handle->data = new Closed(std::move(closed));
    return handle;
  }

  static void run_closed(uv_handle_t* handle) {
    std::unique_ptr<Closed> closed(static_cast<Closed*>(handle->data));
    delete reinterpret_cast<T*>(handle);
    if (*closed) (*closed)();
  }

  T* handle_ = nullptr;
};

}  // namespace stackie
