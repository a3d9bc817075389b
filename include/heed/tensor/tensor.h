// Tensor: a float32, contiguous, row-major array of rank 0..4, or a cheap view into one.
// Leaves out: strided views and other dtypes. A view (reshape, row slice) shares storage;
// anything else that changes layout (transpose, column slice) is a copy made by an op.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "heed/tensor/shape.h"

namespace heed {

class Tensor {
 public:
  Tensor() = default;

  // Heap storage owned by the tensor (shared by its views), 64-byte aligned.
  static Tensor empty(const Shape& shape);
  static Tensor zeros(const Shape& shape);
  static Tensor full(const Shape& shape, float value);
  static Tensor from(const Shape& shape, std::span<const float> values);
  // A non-owning view of memory someone else keeps alive (an Arena, a mapped file).
  static Tensor view(float* data, const Shape& shape) { return Tensor(data, shape, nullptr); }

  float* data() { return data_; }
  const float* data() const { return data_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_.numel(); }
  int64_t dim(int axis) const { return shape_.dim(axis); }
  int rank() const { return shape_.rank(); }
  bool defined() const { return data_ != nullptr || shape_.numel() == 0; }
  std::span<float> span() { return {data_, static_cast<size_t>(numel())}; }
  std::span<const float> span() const { return {data_, static_cast<size_t>(numel())}; }

  // Views sharing storage.
  Tensor reshape(const Shape& shape) const;
  Tensor rows(int64_t start, int64_t count) const;  // slice of the first axis
  Tensor operator[](int64_t i) const;               // select on the first axis

  // Deep copy into new heap storage; and element-wise copy into a same-sized tensor.
  Tensor clone() const;
  void copy_from(const Tensor& src);
  void fill(float value);

 private:
  Tensor(float* data, const Shape& shape, std::shared_ptr<float> owner)
      : data_(data), shape_(shape), owner_(std::move(owner)) {}

  float* data_ = nullptr;
  Shape shape_;
  std::shared_ptr<float> owner_;  // null for views of memory kept alive elsewhere
};

}  // namespace heed
