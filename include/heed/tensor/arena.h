// Arena: a bump allocator for the tensors of one step (values, gradients, saved activations).
// Leaves out: freeing single blocks. reset() frees everything at once and keeps the memory,
// so that after the first step a training step makes no call to malloc.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "heed/tensor/tensor.h"

namespace heed {

class Arena {
 public:
  static constexpr size_t kAlign = 64;  // one cache line, one AVX-512 register

  explicit Arena(size_t initial_bytes = size_t{1} << 20);

  void* allocate(size_t bytes, size_t align = kAlign);
  Tensor tensor(const Shape& shape);  // uninitialised
  Tensor zeros(const Shape& shape);   // zero-filled
  template <class T>
  T* array(size_t n) {
    return static_cast<T*>(allocate(n * sizeof(T), alignof(T) > kAlign ? alignof(T) : kAlign));
  }

  // Frees all blocks at once. When the last step needed more than one chunk, the chunks are
  // merged into one of the total size, so the next step of the same size fits in one.
  void reset();
  size_t bytes_in_use() const;
  size_t capacity() const;
  size_t chunk_count() const { return chunks_.size(); }

 private:
  struct Chunk {
    std::unique_ptr<std::byte[]> memory;
    std::byte* base = nullptr;  // aligned start inside memory
    size_t size = 0;
    size_t used = 0;
  };
  void add_chunk(size_t min_bytes);

  std::vector<Chunk> chunks_;
  size_t current_ = 0;  // index of the chunk being filled
};

}  // namespace heed
