// One-dimensional convolution as GEMMs over shifted views (see the header).
#include "heed/kernels/conv1d.h"

#include <algorithm>

#include "heed/kernels/bf16.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/layout.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"

namespace heed::kernels {

int64_t Conv1dShape::outputs(int64_t b) const {
  const int64_t len = length(b);
  return len == 0 ? 0 : std::min(T, len + back());
}

Conv1dPlan conv1d_plan(const Conv1dShape& s, int force, bool bf16) {
  Conv1dPlan p;
  p.bf16 = bf16;
  p.G = (s.k - 1) * s.dilation;
  int64_t row = p.G, needed = 0;
  for (int64_t b = 0; b < s.B; ++b) {
    p.start.push_back(row);
    row += s.length(b) + p.G;
    needed += s.outputs(b);
  }
  p.lo = s.B > 0 ? p.start.front() : 0;
  p.hi = s.B > 0 ? p.start.back() + s.outputs(s.B - 1) : 0;
  // packing pays when the sequences are short (small GEMMs each) and the rows between them
  // that are computed for nothing are few
  const int64_t wasted = p.hi - p.lo - needed;
  const bool short_rows = needed < 128 * std::max<int64_t>(s.B, 1);
  p.direct =
      !bf16 && s.C_in == 1 && s.k * s.C_out <= kConv1dDirectWeights && (force == 0 || force == 3);
  p.packed = !p.direct && (force == 2 || (force == 0 && short_rows && 4 * wasted <= needed));
  // bf16: [lo, hi) a multiple of 64 rows, the extra rows zeros at the end
  if (bf16 && p.packed) p.hi = p.lo + bf16_padded_rows(p.hi - p.lo);
  p.R = std::max(row, p.hi + (s.k - 1) * s.dilation - s.back());
  return p;
}

namespace {

int64_t halves(int64_t n) {  // floats that hold n bf16 values
  return (n + 1) / 2;
}

// The direct plan (C_in = 1). wT [k, C_out]: each tap's weights as one run of C_out floats.
void transpose_taps(const Conv1dShape& s, const float* w, float* wT) {
  permute(w, Shape{s.C_out, s.k}, {1, 0, 2, 3}, wT, false);
}

void forward_direct(const Conv1dShape& s, const float* x, const float* w, const float* bias,
                    float* y) {
  float wT[kConv1dDirectWeights];
  transpose_taps(s, w, wT);
  const int64_t C = s.C_out;
  for (int64_t b = 0; b < s.B; ++b) {
    const int64_t n = s.outputs(b), len = s.length(b);
    const float* xb = x + b * s.T;
    for (int64_t t = 0; t < s.T; ++t) {
      float* yr = y + (b * s.T + t) * C;
      for (int64_t o = 0; o < C; ++o) yr[o] = bias ? bias[o] : 0.f;
      if (t >= n) continue;
      for (int64_t i = 0; i < s.k; ++i) {
        const int64_t src = t + s.offset(i);
        if (src < 0 || src >= len) continue;
        const float xv = xb[src];
        const float* wi = wT + i * C;
#pragma omp simd
        for (int64_t o = 0; o < C; ++o) yr[o] += wi[o] * xv;
      }
    }
  }
}

void backward_direct(const Conv1dShape& s, const float* x, const float* w, const float* dy,
                     float* dx, float* dw) {
  float wT[kConv1dDirectWeights];
  float dwT[kConv1dDirectWeights] = {};
  transpose_taps(s, w, wT);
  const int64_t C = s.C_out;
  for (int64_t b = 0; b < s.B; ++b) {
    const int64_t n = s.outputs(b), len = s.length(b);
    const float* xb = x + b * s.T;
    for (int64_t t = 0; t < n; ++t) {
      const float* dyr = dy + (b * s.T + t) * C;
      for (int64_t i = 0; i < s.k; ++i) {
        const int64_t src = t + s.offset(i);
        if (src < 0 || src >= len) continue;
        const float* wi = wT + i * C;
        float* dwi = dwT + i * C;
        const float dot = vmath::scaled_add_dot(C, xb[src], dyr, wi, dwi);
        if (dx) dx[b * s.T + src] += dot;
      }
    }
  }
  if (dw) permute(dwT, Shape{s.k, C}, {1, 0, 2, 3}, dw, true);  // dw [C_out, k] += dwT^T
}

}  // namespace

int64_t conv1d_kept_floats(const Conv1dShape& s, const Conv1dPlan& p) {
  const int64_t x_rows = p.packed ? p.R : (p.bf16 ? s.B * s.T : 0);
  if (!p.bf16) return x_rows * s.C_in;
  return halves(x_rows * s.C_in) + halves(s.C_out * s.k * s.C_in);  // bf16 x, bf16 w
}
int64_t conv1d_forward_floats(const Conv1dShape& s, const Conv1dPlan& p) {
  return p.packed ? p.R * s.C_out : 0;
}
int64_t conv1d_backward_floats(const Conv1dShape& s, const Conv1dPlan& p) {
  const int64_t dy_rows = p.packed ? p.R : (p.bf16 ? s.B * s.T : 0);
  const int64_t dy = p.bf16 ? halves(dy_rows * s.C_out) : dy_rows * s.C_out;
  return dy + (p.packed ? p.R * s.C_in : 0);
}

namespace {

// C (+)= op(A) op(B), in fp32 or with bf16 operands
void product(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
             const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  gemm(ta, tb, M, N, K, 1.f, A, lda, B, ldb, beta, C, ldc);
}
void product(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const bf16* A, int64_t lda,
             const bf16* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  gemm_bf16(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

void convert(const float* x, int64_t n, float* y) {
  std::copy_n(x, n, y);
}
void convert(const float* x, int64_t n, bf16* y) {
  to_bf16(x, 1, n, n, y);
}

// The rows t of sequence b whose tap i reads a real input: [t0, t1)
struct Rows {
  int64_t t0, t1;
};
Rows tap_rows(const Conv1dShape& s, int64_t b, int64_t i) {
  const int64_t off = s.offset(i);
  return {std::max<int64_t>(0, -off), std::min(s.outputs(b), s.length(b) - off)};
}

// packed [R, C]: sequence b's first count(b) rows of src [B T, C] at start_b, zeros elsewhere
// (each row written once)
template <class E, class Count>
void pack_rows(const Conv1dShape& s, const Conv1dPlan& p, int64_t C, const float* src, E* packed,
               Count count) {
  if (s.B == 0) {
    std::fill_n(packed, p.R * C, E{0});
    return;
  }
  std::fill_n(packed, p.start.front() * C, E{0});  // before the first
  parallel_for(s.B, grain_for(kSerialWork, s.T * C), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n = count(b), next = b + 1 < s.B ? p.start[b + 1] : p.R;
      convert(src + b * s.T * C, n * C, packed + p.start[b] * C);
      std::fill(packed + (p.start[b] + n) * C, packed + next * C, E{0});  // the gap after it
    }
  });
}

// dst [B T, C] rows t < count(b) += the packed [R, C]'s rows start_b + t
template <class Count>
void unpack_add(const Conv1dShape& s, const Conv1dPlan& p, int64_t C, const float* packed,
                float* dst, Count count) {
  parallel_for(s.B, grain_for(kSerialWork, s.T * C), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* from = packed + p.start[b] * C;
      float* to = dst + b * s.T * C;
      const int64_t n = count(b) * C;
      for (int64_t j = 0; j < n; ++j) to[j] += from[j];
    }
  });
}

void fill_bias(const float* bias, int64_t rows, int64_t C, float* y) {
  if (!bias) {
    std::fill_n(y, rows * C, 0.f);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) std::copy_n(bias, C, y + r * C);
}

// The forward with operands of type E: x [B T, C_in] (per sequence) or packed [R, C_in]
template <class E>
void forward_impl(const Conv1dShape& s, const Conv1dPlan& p, const E* x, const E* w,
                  const float* bias, float* y, float* scratch) {
  const int64_t K = s.k * s.C_in;
  fill_bias(bias, s.B * s.T, s.C_out, y);
  if (!p.packed) {
    // y[b, t] = bias + sum_i x[b, t + off_i] w_i^T, each tap on sequence b's rows
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t i = 0; i < s.k; ++i) {
        const auto [t0, t1] = tap_rows(s, b, i);
        if (t0 >= t1) continue;
        product(false, true, t1 - t0, s.C_out, s.C_in, x + (b * s.T + t0 + s.offset(i)) * s.C_in,
                s.C_in, w + i * s.C_in, K, 1.f, y + (b * s.T + t0) * s.C_out, s.C_out);
      }
    return;
  }
  // packed: scratch [R, C_out] rows [lo, hi) = sum_i x[rows + off_i] w_i^T, then into y
  const int64_t M = p.hi - p.lo;
  for (int64_t i = 0; i < s.k; ++i)
    product(false, true, M, s.C_out, s.C_in, x + (p.lo + s.offset(i)) * s.C_in, s.C_in,
            w + i * s.C_in, K, i == 0 ? 0.f : 1.f, scratch + p.lo * s.C_out, s.C_out);
  unpack_add(s, p, s.C_out, scratch, y, [&](int64_t b) { return s.outputs(b); });
}

// The backward with operands of type E; dy_e [B T, C_out] (per sequence) or packed [R, C_out]
template <class E>
void backward_impl(const Conv1dShape& s, const Conv1dPlan& p, const E* x, const E* w, const E* dy,
                   float* dx, float* dw, float* dx_packed) {
  const int64_t K = s.k * s.C_in;
  if (!p.packed) {
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t i = 0; i < s.k; ++i) {
        const auto [t0, t1] = tap_rows(s, b, i);
        if (t0 >= t1) continue;
        const E* dy_rows = dy + (b * s.T + t0) * s.C_out;
        const int64_t u0 = b * s.T + t0 + s.offset(i);  // the input rows read
        // dw_i += dy^T x(shifted);  dx(shifted) += dy w_i
        if (dw)
          product(true, false, s.C_out, s.C_in, t1 - t0, dy_rows, s.C_out, x + u0 * s.C_in, s.C_in,
                  1.f, dw + i * s.C_in, K);
        if (dx)
          product(false, false, t1 - t0, s.C_in, s.C_out, dy_rows, s.C_out, w + i * s.C_in, K, 1.f,
                  dx + u0 * s.C_in, s.C_in);
      }
    return;
  }
  const int64_t M = p.hi - p.lo;
  if (dw)
    for (int64_t i = 0; i < s.k; ++i)
      product(true, false, s.C_out, s.C_in, M, dy + p.lo * s.C_out, s.C_out,
              x + (p.lo + s.offset(i)) * s.C_in, s.C_in, 1.f, dw + i * s.C_in, K);
  if (!dx) return;
  std::fill_n(dx_packed, p.R * s.C_in, 0.f);
  for (int64_t i = 0; i < s.k; ++i)
    product(false, false, M, s.C_in, s.C_out, dy + p.lo * s.C_out, s.C_out, w + i * s.C_in, K, 1.f,
            dx_packed + (p.lo + s.offset(i)) * s.C_in, s.C_in);
  unpack_add(s, p, s.C_in, dx_packed, dx, [&](int64_t b) { return s.length(b); });
}

// Where the bf16 copy of w starts inside `kept` (the bf16 copy of x first), in floats
int64_t kept_w_offset(const Conv1dShape& s, const Conv1dPlan& p) {
  return halves((p.packed ? p.R : s.B * s.T) * s.C_in);
}

}  // namespace

void conv1d_forward(const Conv1dShape& s, const Conv1dPlan& p, const float* x, const float* w,
                    const float* bias, float* y, float* kept, float* scratch) {
  const auto real = [&](int64_t b) { return s.length(b); };
  if (p.direct) return forward_direct(s, x, w, bias, y);
  if (p.bf16) {
    auto* x_h = reinterpret_cast<bf16*>(kept);
    auto* w_h = reinterpret_cast<bf16*>(kept + kept_w_offset(s, p));
    if (p.packed)
      pack_rows(s, p, s.C_in, x, x_h, real);
    else
      to_bf16(x, s.B * s.T, s.C_in, s.C_in, x_h);
    to_bf16(w, s.C_out, s.k * s.C_in, s.k * s.C_in, w_h);
    return forward_impl<bf16>(s, p, x_h, w_h, bias, y, scratch);
  }
  if (p.packed) pack_rows(s, p, s.C_in, x, kept, real);
  forward_impl<float>(s, p, p.packed ? kept : x, w, bias, y, scratch);
}

void conv1d_backward(const Conv1dShape& s, const Conv1dPlan& p, const float* x, const float* w,
                     const float* dy, float* dx, float* dw, float* dbias, const float* kept,
                     float* scratch) {
  const int64_t N = s.B * s.T;
  if (dbias)
    for (int64_t r = 0; r < N; ++r)
      for (int64_t o = 0; o < s.C_out; ++o) dbias[o] += dy[r * s.C_out + o];
  const auto outputs = [&](int64_t b) { return s.outputs(b); };
  if (p.direct) return backward_direct(s, x, w, dy, dx, dw);
  if (p.bf16) {
    const auto* x_h = reinterpret_cast<const bf16*>(kept);
    const auto* w_h = reinterpret_cast<const bf16*>(kept + kept_w_offset(s, p));
    auto* dy_h = reinterpret_cast<bf16*>(scratch);
    const int64_t dy_rows = p.packed ? p.R : N;
    if (p.packed)
      pack_rows(s, p, s.C_out, dy, dy_h, outputs);
    else
      to_bf16(dy, N, s.C_out, s.C_out, dy_h);
    return backward_impl<bf16>(s, p, x_h, w_h, dy_h, dx, dw, scratch + halves(dy_rows * s.C_out));
  }
  if (!p.packed) return backward_impl<float>(s, p, x, w, dy, dx, dw, nullptr);
  pack_rows(s, p, s.C_out, dy, scratch, outputs);
  backward_impl<float>(s, p, kept, w, scratch, dx, dw, scratch + p.R * s.C_out);
}

}  // namespace heed::kernels
