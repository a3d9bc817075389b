// Tensor storage and views.
// Leaves out: math (kernels/) and graphs (autograd/).
#include "heed/tensor/tensor.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "heed/util/error.h"

namespace heed {

namespace {

// Storage of 4 MiB and more (embedding tables, the output layer, their gradients and Adam's
// moments) is mapped on its own in 2 MiB pages. On 4 KiB pages the optimiser's pass over such a
// table missed the TLB every 4 KiB of each of its four streams (the parameter, its gradient, m
// and v; a nested page walk under a hypervisor) and ran ~15x slower than over the same data
// in 2 MiB pages: Adam over the issue-70 Transformer's 11.4 M parameters took 77-97 ms of a
// 420 ms fp32 step on a Zen 5, 17 ms with them (the two embedding tables, 7.4 M, 40 -> 2.6
// ms). Anonymous memory comes zeroed, and untouched pages stay unbacked.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kMappedFrom = size_t{4} << 20;

float* mapped(size_t bytes, std::shared_ptr<float>& owner) {
  const size_t length = (bytes + kHugePage - 1) / kHugePage * kHugePage + kHugePage;
  void* map = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::bad_alloc();
  const auto at = (reinterpret_cast<uintptr_t>(map) + kHugePage - 1) / kHugePage * kHugePage;
  auto* p = reinterpret_cast<float*>(at);  // NOLINT(performance-no-int-to-ptr): the aligned start
  ::madvise(p, length - kHugePage, MADV_HUGEPAGE);  // advice: without THP, 4 KiB pages
  owner = std::shared_ptr<float>(p, [map, length](float*) { ::munmap(map, length); });
  return p;
}

}  // namespace

Tensor Tensor::empty(const Shape& shape) {
  size_t bytes = static_cast<size_t>(shape.numel()) * sizeof(float);
  if (bytes >= kMappedFrom) {
    std::shared_ptr<float> owner;
    float* p = mapped(bytes, owner);
    return Tensor(p, shape, std::move(owner));
  }
  size_t rounded = (bytes + 63) / 64 * 64;
  float* p = static_cast<float*>(std::aligned_alloc(64, rounded ? rounded : 64));
  if (!p) throw std::bad_alloc();
  return Tensor(p, shape, std::shared_ptr<float>(p, [](float* q) { std::free(q); }));
}

// From calloc, which knows when its memory comes fresh from the system (zero already) and then
// leaves the pages untouched: a gradient or an optimiser moment takes no resident memory until
// it is first written, and a model loaded for decoding never writes its gradients. (Large ones
// are mapped, zero and unbacked until written as well.)
Tensor Tensor::zeros(const Shape& shape) {
  const size_t bytes = static_cast<size_t>(shape.numel()) * sizeof(float);
  if (bytes >= kMappedFrom) return empty(shape);
  void* raw = std::calloc(bytes + 64, 1);  // 64 spare bytes to align the start
  if (!raw) throw std::bad_alloc();
  void* start = raw;
  size_t space = bytes + 64;
  std::align(64, bytes, start, space);  // always fits: 64 spare bytes
  auto* p = static_cast<float*>(start);
  return Tensor(p, shape, std::shared_ptr<float>(p, [raw](float*) { std::free(raw); }));
}

Tensor Tensor::full(const Shape& shape, float value) {
  Tensor t = empty(shape);
  t.fill(value);
  return t;
}

Tensor Tensor::from(const Shape& shape, std::span<const float> values) {
  check(static_cast<int64_t>(values.size()) == shape.numel(), "Tensor::from: ", values.size(),
        " values for shape ", shape);
  Tensor t = empty(shape);
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

Tensor Tensor::reshape(const Shape& shape) const {
  check(shape.numel() == numel(), "reshape: cannot view ", shape_, " as ", shape);
  return Tensor(data_, shape, owner_);
}

Tensor Tensor::rows(int64_t start, int64_t count) const {
  check(rank() >= 1 && start >= 0 && count >= 0 && start + count <= shape_[0], "rows(", start, ", ",
        count, ") is out of range for shape ", shape_);
  int64_t row = shape_.inner(0);
  return Tensor(data_ + start * row, shape_.with(0, count), owner_);
}

Tensor Tensor::operator[](int64_t i) const {
  Tensor r = rows(i, 1);
  return Tensor(r.data_, shape_.without(0), owner_);
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_);
  t.copy_from(*this);
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  check(src.numel() == numel(), "copy_from: ", src.shape(), " into ", shape_);
  if (numel()) std::memcpy(data_, src.data(), numel() * sizeof(float));
}

void Tensor::fill(float value) {
  int64_t n = numel();
  for (int64_t i = 0; i < n; ++i) data_[i] = value;
}

}  // namespace heed
