// Arena: a bump allocator for the tensors of one step (values, gradients, saved activations).
// Leaves out: freeing single blocks. reset() frees everything at once and keeps the memory,
// so that after the first step a training step makes no call to malloc. Chunk memory is the
// expensive part of a first step (the kernel faults in and zeroes every page), so large chunks
// ask for transparent huge pages, and chunks of a destroyed arena go to a process-wide pool
// that the next arena (the next decoding graph, say) takes them from.
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
  ~Arena();  // returns the chunks to a process-wide pool, for the next arena to reuse
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void* allocate(size_t bytes, size_t align = kAlign);
  Tensor tensor(const Shape& shape);  // uninitialised
  Tensor zeros(const Shape& shape);   // zero-filled
  template <class T>
  T* array(size_t n) {
    return static_cast<T*>(allocate(n * sizeof(T), alignof(T) > kAlign ? alignof(T) : kAlign));
  }

  // Frees all blocks at once and keeps every chunk: the next step reuses the same pages (a step
  // that needs more adds a chunk for the excess only).
  void reset();
  // A position in the arena; rewind(m) frees every block allocated after mark() returned m
  // (and keeps the memory, so the next blocks reuse the same, cache-warm, pages).
  struct Mark {
    size_t chunk = 0, used = 0;
  };
  Mark mark() const { return {current_, chunks_[current_].used}; }
  void rewind(const Mark& m);
  size_t bytes_in_use() const;
  size_t capacity() const;
  size_t chunk_count() const { return chunks_.size(); }

 private:
  struct Chunk {
    std::byte* base = nullptr;  // kAlign-aligned (2 MiB-aligned and huge-page backed when large)
    size_t size = 0;
    size_t used = 0;
  };
  static Chunk acquire(size_t min_bytes);  // from the pool, or fresh memory
  static void release(Chunk c);            // to the pool (bounded), or freed
  void add_chunk(size_t min_bytes);

  std::vector<Chunk> chunks_;
  size_t current_ = 0;  // index of the chunk being filled
};

}  // namespace heed
