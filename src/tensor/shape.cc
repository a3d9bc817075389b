// Shape arithmetic and NumPy broadcasting.
// Leaves out: anything about storage.
#include "heed/tensor/shape.h"

#include <algorithm>

#include "heed/util/error.h"

namespace heed {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(const std::vector<int64_t>& dims) {
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
  check(a >= 0 && a < rank_, "axis ", axis, " is out of range for shape ", str());
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
  std::vector<int64_t> d;
  for (int i = 0; i < rank_; ++i)
    if (i != a) d.push_back(dims_[i]);
  return Shape(d);
}

Shape Shape::padded(int rank) const {
  check(rank >= rank_ && rank <= kMaxRank, "cannot pad shape ", str(), " to rank ", rank);
  std::vector<int64_t> d(rank - rank_, 1);
  for (int i = 0; i < rank_; ++i) d.push_back(dims_[i]);
  return Shape(d);
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

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  int r = std::max(a.rank(), b.rank());
  Shape pa = a.padded(r), pb = b.padded(r);
  std::vector<int64_t> d(r);
  for (int i = 0; i < r; ++i) {
    check(pa[i] == pb[i] || pa[i] == 1 || pb[i] == 1, op, ": shapes ", a.str(), " and ", b.str(),
          " do not broadcast");
    d[i] = pa[i] == 1 ? pb[i] : pa[i];
  }
  return Shape(d);
}

}  // namespace heed
