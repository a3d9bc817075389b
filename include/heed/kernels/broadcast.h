// Broadcast indexing shared by the kernels: element strides of an operand seen in an output's
// shape (0 along broadcast axes), everything padded to rank 4.
// Leaves out: arbitrary strides; operands are contiguous tensors.
#pragma once

#include <array>
#include <cstdint>

#include "heed/tensor/shape.h"

namespace heed::kernels {

inline std::array<int64_t, 4> broadcast_strides(const Shape& s, const Shape& out) {
  Shape p = s.padded(4), o = out.padded(4);
  std::array<int64_t, 4> st{};
  int64_t acc = 1;
  for (int i = 3; i >= 0; --i) {
    st[i] = (p[i] == 1 && o[i] != 1) ? 0 : acc;
    acc *= p[i];
  }
  return st;
}

// Offset of row r (of the out shape's [rows, last] view) inside the broadcast operand.
inline int64_t broadcast_row_offset(int64_t r, const Shape& out4,
                                    const std::array<int64_t, 4>& st) {
  int64_t i0 = r / (out4[1] * out4[2]), i1 = (r / out4[2]) % out4[1], i2 = r % out4[2];
  return i0 * st[0] + i1 * st[1] + i2 * st[2];
}

}  // namespace heed::kernels
