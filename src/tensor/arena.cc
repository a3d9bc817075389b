// Arena: chunked bump allocation, reset per step, chunks pooled across arenas.
// Leaves out: thread safety of one arena (one graph, one thread builds it); the pool is shared
// and locked.
#include "heed/tensor/arena.h"

#include "heed/util/error.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace heed {
namespace {

constexpr size_t kHuge = size_t{2} << 20;       // one transparent huge page
constexpr size_t kPoolLimit = size_t{4} << 30;  // bytes kept for reuse at most

struct Pool {
  std::mutex mutex;
  std::vector<std::pair<std::byte*, size_t>> free;  // (memory, size)
  size_t bytes = 0;
};
Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: arenas may outlive static destruction
  return *p;
}

}  // namespace

Arena::Chunk Arena::acquire(size_t min_bytes) {
  size_t size = std::max(min_bytes, size_t{1} << 16);
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    auto best = p.free.end();
    for (auto it = p.free.begin(); it != p.free.end(); ++it)
      if (it->second >= size && (best == p.free.end() || it->second < best->second)) best = it;
    if (best != p.free.end()) {
      Chunk c{best->first, best->second, 0};
      p.bytes -= best->second;
      p.free.erase(best);
      return c;
    }
  }
  const bool large = size >= kHuge;
  const size_t align = large ? kHuge : kAlign;
  size = (size + align - 1) / align * align;
  auto* mem = static_cast<std::byte*>(std::aligned_alloc(align, size));
  if (!mem) throw std::bad_alloc();
  if (large) ::madvise(mem, size, MADV_HUGEPAGE);  // fewer, cheaper page faults
  return {mem, size, 0};
}

void Arena::release(Chunk c) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.free.emplace_back(c.base, c.size);
  p.bytes += c.size;
  while (p.bytes > kPoolLimit) {  // drop the smallest blocks first
    auto smallest =
        std::min_element(p.free.begin(), p.free.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    p.bytes -= smallest->second;
    std::free(smallest->first);
    p.free.erase(smallest);
  }
}

Arena::Arena(size_t initial_bytes) {
  add_chunk(initial_bytes);
}

Arena::~Arena() {
  for (auto& c : chunks_) release(c);
}

void Arena::add_chunk(size_t min_bytes) {
  chunks_.push_back(acquire(min_bytes));
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
    // a quarter more: a step a little larger than the largest so far fits without growing again
    add_chunk(std::max(bytes + align, capacity() / 4));
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
  // Every chunk is kept, in order: merging them into one new chunk would hand the next step
  // fresh memory, whose every page the kernel faults in and zeroes again (measured: a quarter
  // of a Transformer training step when batch sizes vary).
  current_ = 0;
  chunks_[0].used = 0;
}

void Arena::rewind(const Mark& m) {
  check(m.chunk < current_ || (m.chunk == current_ && m.used <= chunks_[current_].used),
        "Arena::rewind: the mark is not behind the current position");
  current_ = m.chunk;
  chunks_[current_].used = m.used;
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
