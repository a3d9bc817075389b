// Shape: the dimensions of a dense, row-major tensor of rank 0..4.
// Leaves out: strides (every heed tensor is contiguous) and dtypes (every tensor is float32).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

namespace heed {

class Shape {
 public:
  static constexpr int kMaxRank = 4;

  Shape() = default;  // rank 0: a scalar with one element
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);
  explicit Shape(std::span<const int64_t> dims);

  int rank() const { return rank_; }
  int64_t operator[](int axis) const { return dims_[axis]; }
  int64_t& operator[](int axis) { return dims_[axis]; }
  // Dimension counted from the end when axis < 0 (axis -1 is the last).
  int64_t dim(int axis) const { return dims_[normalize(axis)]; }
  int64_t numel() const;
  int64_t last() const { return rank_ ? dims_[rank_ - 1] : 1; }
  // Product of all dims but the last: the number of rows of the [rows, last] matrix view.
  int64_t rows() const { return rank_ ? numel() / dims_[rank_ - 1] : 1; }
  // Elements before / after `axis`: the [outer, dim(axis), inner] view used by axis ops.
  int64_t outer(int axis) const;
  int64_t inner(int axis) const;
  int normalize(int axis) const;  // maps -rank..rank-1 to 0..rank-1, or throws

  std::vector<int64_t> dims() const { return {dims_.begin(), dims_.begin() + rank_}; }
  Shape with(int axis, int64_t value) const;  // a copy with one dimension changed
  Shape without(int axis) const;              // a copy with one axis removed
  Shape appended(int64_t dim) const;          // a copy with a new last axis
  Shape padded(int rank) const;               // left-padded with 1s to `rank`

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;  // "[2, 3, 4]"

 private:
  std::array<int64_t, kMaxRank> dims_{1, 1, 1, 1};
  int rank_ = 0;
};
// Streams str(): check() messages take a Shape as it is, so that nothing is formatted unless
// the check fails (a string built per op call is visible in batch-1 decoding).
std::ostream& operator<<(std::ostream& os, const Shape& s);

// NumPy broadcasting of two shapes; throws with both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace heed
