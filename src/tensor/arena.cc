// Arena: chunked bump allocation, reset per step.
// Leaves out: thread safety (one graph, one thread builds it).
#include "heed/tensor/arena.h"

#include <algorithm>
#include <cstring>

namespace heed {

Arena::Arena(size_t initial_bytes) {
  add_chunk(initial_bytes);
}

void Arena::add_chunk(size_t min_bytes) {
  Chunk c;
  c.size = std::max(min_bytes, size_t{1} << 16);
  c.memory.reset(new std::byte[c.size + kAlign]);
  auto addr = reinterpret_cast<uintptr_t>(c.memory.get());
  c.base = c.memory.get() + ((kAlign - addr % kAlign) % kAlign);
  chunks_.push_back(std::move(c));
}

void* Arena::allocate(size_t bytes, size_t align) {
  bytes = std::max<size_t>(bytes, 1);
  for (;;) {
    Chunk& c = chunks_[current_];
    size_t start = (c.used + align - 1) / align * align;
    if (start + bytes <= c.size) {
      c.used = start + bytes;
      return c.base + start;
    }
    if (current_ + 1 < chunks_.size()) {
      ++current_;
      chunks_[current_].used = 0;
      continue;
    }
    add_chunk(std::max(bytes + align, c.size * 2));
    current_ = chunks_.size() - 1;
  }
}

Tensor Arena::tensor(const Shape& shape) {
  auto* p = static_cast<float*>(allocate(static_cast<size_t>(shape.numel()) * sizeof(float)));
  return Tensor::view(p, shape);
}

Tensor Arena::zeros(const Shape& shape) {
  Tensor t = tensor(shape);
  if (t.numel()) std::memset(t.data(), 0, t.numel() * sizeof(float));
  return t;
}

void Arena::reset() {
  if (chunks_.size() > 1) {
    size_t total = capacity();
    chunks_.clear();
    add_chunk(total);
  }
  current_ = 0;
  chunks_[0].used = 0;
}

size_t Arena::bytes_in_use() const {
  size_t n = 0;
  for (size_t i = 0; i <= current_ && i < chunks_.size(); ++i) n += chunks_[i].used;
  return n;
}

size_t Arena::capacity() const {
  size_t n = 0;
  for (const auto& c : chunks_) n += c.size;
  return n;
}

}  // namespace heed
