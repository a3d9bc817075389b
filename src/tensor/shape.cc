// Shape arithmetic and NumPy broadcasting.
// Leaves out: anything about storage.
#include "heed/tensor/shape.h"

#include <ostream>

#include <algorithm>

#include "heed/util/error.h"

namespace heed {

// Shapes are built on every op: no heap allocation anywhere in this file's hot paths.
Shape::Shape(std::initializer_list<int64_t> dims)
    : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(const std::vector<int64_t>& dims) : Shape(std::span<const int64_t>(dims)) {}

Shape::Shape(std::span<const int64_t> dims) {
  check(dims.size() <= kMaxRank, "tensor rank ", dims.size(), " exceeds the maximum of ", kMaxRank);
  rank_ = static_cast<int>(dims.size());
  for (int i = 0; i < rank_; ++i) {
    check(dims[i] >= 0, "negative dimension ", dims[i], " in a shape");
    dims_[i] = dims[i];
  }
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[i];
  return n;
}

int Shape::normalize(int axis) const {
  int a = axis < 0 ? axis + rank_ : axis;
  check(a >= 0 && a < rank_, "axis ", axis, " is out of range for shape ", *this);
  return a;
}

int64_t Shape::outer(int axis) const {
  int a = normalize(axis);
  int64_t n = 1;
  for (int i = 0; i < a; ++i) n *= dims_[i];
  return n;
}

int64_t Shape::inner(int axis) const {
  int a = normalize(axis);
  int64_t n = 1;
  for (int i = a + 1; i < rank_; ++i) n *= dims_[i];
  return n;
}

Shape Shape::with(int axis, int64_t value) const {
  Shape s = *this;
  s.dims_[normalize(axis)] = value;
  return s;
}

Shape Shape::without(int axis) const {
  int a = normalize(axis);
  Shape s;
  s.rank_ = rank_ - 1;
  for (int i = 0, j = 0; i < rank_; ++i)
    if (i != a) s.dims_[j++] = dims_[i];
  return s;
}

Shape Shape::appended(int64_t dim) const {
  check(rank_ < kMaxRank, "cannot add an axis to shape ", *this);
  Shape s = *this;
  s.dims_[s.rank_++] = dim;
  return s;
}

Shape Shape::padded(int rank) const {
  check(rank >= rank_ && rank <= kMaxRank, "cannot pad shape ", *this, " to rank ", rank);
  Shape s;
  s.rank_ = rank;
  int pad = rank - rank_;
  for (int i = 0; i < rank; ++i) s.dims_[i] = i < pad ? 1 : dims_[i - pad];
  return s;
}

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] != o.dims_[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  return os << s.str();
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  int r = std::max(a.rank(), b.rank());
  Shape pa = a.padded(r), pb = b.padded(r), out = pa;
  for (int i = 0; i < r; ++i) {
    check(pa[i] == pb[i] || pa[i] == 1 || pb[i] == 1, op, ": shapes ", a, " and ", b,
          " do not broadcast");
    out[i] = pa[i] == 1 ? pb[i] : pa[i];
  }
  return out;
}

}  // namespace heed
