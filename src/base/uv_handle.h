// The one RAII owner of a libuv handle (DESIGN.md §8). libuv keeps using a handle until its close
// callback has run, so the memory lives on the heap and is freed there, never in a destructor.
// Owners clear handle->data when they let go, so a late callback finds no owner to call back.
#pragma once

#include <uv.h>

#include <cassert>
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

 private:
  T* handle_ = nullptr;
};

}  // namespace stackie
