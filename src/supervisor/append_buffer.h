// Bytes appended at the end and then used as a whole: a block's file batch, the records of one
// read written with one write(2). Unlike std::string::resize, growing it does not fill the new
// room with zeros first: the records are copied in right after, and under a flood of short lines
// that fill was a memset per line for bytes about to be overwritten (issue 25).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

namespace stackie {

class AppendBuffer {
 public:
  using value_type = char;

  // `n` more bytes at the end, not initialised: the caller fills them all before the buffer is
  // read. The pointer is valid until the next extend() or append().
  char* extend(size_t n) {
    if (capacity_ - size_ < n) grow(size_ + n);
    char* at = bytes_.get() + size_;
    size_ += n;
    return at;
  }
  void append(std::string_view text) {
    if (!text.empty()) std::memcpy(extend(text.size()), text.data(), text.size());
  }
  void append(char c) { *extend(1) = c; }

  std::string_view view() const { return {bytes_.get(), size_}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  // Keeps the memory for the next batch.
  void clear() { size_ = 0; }
  void swap(AppendBuffer& other) noexcept {
    std::swap(bytes_, other.bytes_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

 private:
  // Doubles (from 256 bytes), as std::string does: amortised constant per append.
  void grow(size_t at_least) {
    size_t capacity = capacity_ == 0 ? 256 : capacity_;
    while (capacity < at_least) capacity *= 2;
    std::unique_ptr<char[]> bytes(new char[capacity]);
    if (size_ > 0) std::memcpy(bytes.get(), bytes_.get(), size_);
    bytes_ = std::move(bytes);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace stackie
