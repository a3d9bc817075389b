// Permutation, slab copies and masked fill.
// Leaves out: cache-blocked transposes (not yet a measured bottleneck).
#include "heed/kernels/layout.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "heed/kernels/broadcast.h"
#include "heed/kernels/parallel.h"
#include "heed/util/error.h"

namespace heed::kernels {

void permute(const float* src, const Shape& shape, const std::array<int, 4>& perm, float* dst,
             bool accumulate) {
  int r = shape.rank();
  // Work in rank 4: pad the source with leading 1-axes and shift the permutation.
  Shape s = shape.padded(4);
  std::array<int, 4> p{0, 1, 2, 3};
  for (int i = 0; i < r; ++i) p[4 - r + i] = perm[i] + (4 - r);
  std::array<int64_t, 4> sst{s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
  std::array<int64_t, 4> d{s[p[0]], s[p[1]], s[p[2]], s[p[3]]};
  std::array<int64_t, 4> st{sst[p[0]], sst[p[1]], sst[p[2]], sst[p[3]]};
  int64_t rows = d[0] * d[1] * d[2];
  parallel_for(rows, grain_for(16384, d[3]), [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      int64_t i0 = row / (d[1] * d[2]), i1 = (row / d[2]) % d[1], i2 = row % d[2];
      const float* ps = src + i0 * st[0] + i1 * st[1] + i2 * st[2];
      float* pd = dst + row * d[3];
      int64_t x = st[3];
      if (accumulate)
        for (int64_t j = 0; j < d[3]; ++j) pd[j] += ps[j * x];
      else
        for (int64_t j = 0; j < d[3]; ++j) pd[j] = ps[j * x];
    }
  });
}

namespace {
// d (=|+=) s, n floats
void put(float* d, const float* s, int64_t n, bool accumulate) {
  if (accumulate) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) d[j] += s[j];
  } else if (n) {
    std::memcpy(d, s, n * sizeof(float));
  }
}
}  // namespace

void copy_slab(const float* src, int64_t src_n, int64_t src_off, float* dst, int64_t dst_n,
               int64_t dst_off, int64_t outer, int64_t len, int64_t inner, bool accumulate) {
  int64_t block = len * inner;
  parallel_for(outer, grain_for(16384, block), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      put(dst + (o * dst_n + dst_off) * inner, src + (o * src_n + src_off) * inner, block,
          accumulate);
  });
}

namespace {
// f(padded row block, packed row block, rows) for each sequence b, in parallel over b
template <class F>
void for_sequences(int64_t B, int64_t T, int64_t D, const int32_t* lengths, F f) {
  std::vector<int64_t> offsets(B + 1, 0);
  for (int64_t b = 0; b < B; ++b) offsets[b + 1] = offsets[b] + lengths[b];
  parallel_for(B, grain_for(16384, T * D), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) f(b * T * D, offsets[b] * D, lengths[b]);
  });
}
}  // namespace

void pack_rows(const float* padded, float* packed, int64_t B, int64_t T, int64_t D,
               const int32_t* lengths, bool accumulate) {
  for_sequences(B, T, D, lengths, [=](int64_t from, int64_t to, int64_t rows) {
    put(packed + to, padded + from, rows * D, accumulate);
  });
}

void unpack_rows(const float* packed, float* padded, int64_t B, int64_t T, int64_t D,
                 const int32_t* lengths, bool accumulate) {
  for_sequences(B, T, D, lengths, [=](int64_t to, int64_t from, int64_t rows) {
    put(padded + to, packed + from, rows * D, accumulate);
    if (!accumulate) std::memset(padded + to + rows * D, 0, (T - rows) * D * sizeof(float));
  });
}

void gather_rows(const float* src, std::span<const int32_t> rows, int64_t D, float* dst,
                 bool accumulate) {
  for (size_t i = 0; i < rows.size(); ++i)
    put(dst + static_cast<int64_t>(i) * D, src + static_cast<int64_t>(rows[i]) * D, D, accumulate);
}

void scatter_rows(const float* src, std::span<const int32_t> rows, int64_t D, float* dst,
                  int64_t total, bool accumulate) {
  if (!accumulate) std::memset(dst, 0, static_cast<size_t>(total * D) * sizeof(float));
  for (size_t i = 0; i < rows.size(); ++i)
    put(dst + static_cast<int64_t>(rows[i]) * D, src + static_cast<int64_t>(i) * D, D, true);
}

namespace {
template <class F>
void for_masked_rows(const float* mask, const Shape& mask_shape, const Shape& shape, F f) {
  Shape o = shape.padded(4);
  auto ms = broadcast_strides(mask_shape, shape);
  int64_t n = shape.last(), rows = shape.rows();
  int64_t mstep = mask_shape.last() == 1 && n != 1 ? 0 : 1;
  parallel_for(rows, grain_for(16384, n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) f(r * n, mask + broadcast_row_offset(r, o, ms), mstep, n);
  });
}
}  // namespace

void masked_fill(const float* x, const float* mask, const Shape& mask_shape, float value, float* y,
                 const Shape& shape) {
  for_masked_rows(mask, mask_shape, shape, [&](int64_t off, const float* m, int64_t ms, int64_t n) {
    for (int64_t j = 0; j < n; ++j) y[off + j] = m[j * ms] != 0.f ? value : x[off + j];
  });
}

void masked_fill_backward(const float* dy, const float* mask, const Shape& mask_shape, float* dx,
                          const Shape& shape) {
  for_masked_rows(mask, mask_shape, shape, [&](int64_t off, const float* m, int64_t ms, int64_t n) {
    for (int64_t j = 0; j < n; ++j) dx[off + j] += m[j * ms] != 0.f ? 0.f : dy[off + j];
  });
}

void keep_rows(float* data, int64_t stride, int64_t width, std::span<const int32_t> keep) {
  for (size_t r = 0; r < keep.size(); ++r) {
    check(keep[r] >= static_cast<int32_t>(r) && (r == 0 || keep[r] > keep[r - 1]),
          "keep_rows: the rows kept must ascend");
    if (keep[r] != static_cast<int32_t>(r))
      std::memcpy(data + static_cast<int64_t>(r) * stride, data + keep[r] * stride,
                  sizeof(float) * width);
  }
}

}  // namespace heed::kernels
