// Layout kernels: axis permutation and slab copies (the [outer, n, inner] blocks behind concat,
// slice and their gradients).
// Leaves out: views; a copy is made only when the memory order changes.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "heed/tensor/shape.h"

namespace heed::kernels {

// dst = src with axes permuted: dst.dim(i) = src.dim(perm[i]). With accumulate, dst +=.
void permute(const float* src, const Shape& shape, const std::array<int, 4>& perm, float* dst,
             bool accumulate);

// For o < outer: dst[o, dst_off : dst_off + len, :] (=|+=) src[o, src_off : src_off + len, :],
// where src rows have src_n and dst rows dst_n entries along the middle axis, `inner` wide.
void copy_slab(const float* src, int64_t src_n, int64_t src_off, float* dst, int64_t dst_n,
               int64_t dst_off, int64_t outer, int64_t len, int64_t inner, bool accumulate);

// Packed sequences (no padding): sequence b, rows 0 .. lengths[b] of a padded [B, T, D] block,
// is rows offsets[b] .. offsets[b] + lengths[b] of a packed [N, D] one, offsets[b] being the sum
// of the lengths before b.
// packed (=|+=) the non-padding rows of padded.
void pack_rows(const float* padded, float* packed, int64_t B, int64_t T, int64_t D,
               const int32_t* lengths, bool accumulate);
// The non-padding rows of padded (=|+=) packed; without accumulate the padding rows become 0.
void unpack_rows(const float* packed, float* padded, int64_t B, int64_t T, int64_t D,
                 const int32_t* lengths, bool accumulate);

// Rows by index: dst[i] (=|+=) src[rows[i]] for i < n (gather), and dst[rows[i]] (=|+=) src[i]
// (scatter; without accumulate, dst's other rows among its `total` become 0). D floats a row.
void gather_rows(const float* src, std::span<const int32_t> rows, int64_t D, float* dst,
                 bool accumulate);
void scatter_rows(const float* src, std::span<const int32_t> rows, int64_t D, float* dst,
                  int64_t total, bool accumulate);

// Rows `keep` (strictly ascending) of a [rows, stride] block moved in place to rows 0 .. n-1,
// the first `width` entries of each (greedy and beam search dropping finished sentences' rows
// from decoder state). keep[r] >= r, so no row is overwritten before it is read.
void keep_rows(float* data, int64_t stride, int64_t width, std::span<const int32_t> keep);

// y = mask ? value : x, mask broadcast to x's shape (non-zero = fill). Backward: dx += !mask * dy.
void masked_fill(const float* x, const float* mask, const Shape& mask_shape, float value, float* y,
                 const Shape& shape);
void masked_fill_backward(const float* dy, const float* mask, const Shape& mask_shape, float* dx,
                          const Shape& shape);

}  // namespace heed::kernels
