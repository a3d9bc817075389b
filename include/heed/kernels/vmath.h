// Vectorisable scalar math: exp, tanh, sigmoid, GELU written with arithmetic and bit casts only,
// so that loops calling them compile to AVX-512 (or SSE on a portable build) without libmvec.
// Leaves out: correct rounding. exp has a relative error below 2e-7 on [-87, 88]; log an error
// below 3e-7 max(1, |log x|); tanh and sigmoid below 1e-6, far below float training noise. The
// tests check them against <cmath>.
#pragma once

#include <bit>
#include <cstdint>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace heed::vmath {

// max(init, x_0, ..., x_{n-1}) and max(0, |x_0|, ...): the ternary under an OpenMP simd max
// reduction is what GCC 12 vectorises (std::max, being order-dependent for NaN, stays scalar with
// a compare chain: 16x slower over a 10k-word vocabulary row).
inline float max(const float* x, int64_t n, float init) {
  float m = init;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j) m = m > x[j] ? m : x[j];
  // The reduction's private copies start at the type's least value, which OpenMP lets a compiler
  // take as -FLT_MAX (clang does; GCC takes -inf): a row of -inf (fully masked) would come out
  // -FLT_MAX. Only then, once more without the reduction.
  if (m == -3.40282347e+38f) {
    m = init;
    for (int64_t j = 0; j < n; ++j) m = m > x[j] ? m : x[j];
  }
  return m;
}
inline float max_abs(const float* x, int64_t n) {
  float m = 0.f;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j) {
    const float a = x[j] < 0.f ? -x[j] : x[j];
    m = m > a ? m : a;
  }
  return m;
}

// The first index of the maximum of x_0..x_{n-1} (n >= 1), as std::max_element, whose compare
// chain is ~9x slower over a 6k-word row: max(), then a scan for its first occurrence.
inline int64_t argmax(const float* x, int64_t n) {
  const float m = max(x, n, x[0]);
  int64_t j = 0;
  while (j + 1 < n && x[j] != m) ++j;  // (n - 1 for a row with NaN)
  return j;
}

// The first j with x_j >= threshold, or n when there is none: blocks of 64 whose (vectorised)
// maximum is below the threshold are passed over whole, so a search over the 2,000 entries of a
// long source costs ~125 vector compares, not 2,000 branches.
inline int64_t first_at_least(const float* x, int64_t n, float threshold) {
  int64_t j = 0;
  while (j + 64 <= n && max(x + j, 64, x[j]) < threshold) j += 64;
  while (j < n && !(x[j] >= threshold)) ++j;
  return j;
}

#if defined(__AVX512F__)
// The sum of the 16 lanes of v as a tree, through memory: GCC 12's 512-to-256-bit extracts (and
// so _mm512_reduce_add_ps) warn of an undefined register they never read.
inline float hsum(__m512 v) {
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  __m128 s = _mm_add_ps(_mm_add_ps(_mm_load_ps(t), _mm_load_ps(t + 4)),
                        _mm_add_ps(_mm_load_ps(t + 8), _mm_load_ps(t + 12)));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
#endif

// sum_k a_k b_k and sum_k x_k. GCC 12 compiles an OpenMP simd sum to vector partial sums that it
// then spills and adds one lane at a time: 16 dependent adds, 4x the products themselves for
// the 32-wide dot products of attention heads. With AVX-512 the lanes are added as a tree.
inline float dot(const float* a, const float* b, int64_t n) {
#if defined(__AVX512F__)
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), acc);
  if (k < n) {
    const auto tail = static_cast<__mmask16>((1u << (n - k)) - 1u);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a + k), _mm512_maskz_loadu_ps(tail, b + k),
                          acc);
  }
  return hsum(acc);
#else
  float s = 0.f;
#pragma omp simd reduction(+ : s)
  for (int64_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
#endif
}
// Four dot products at once, out[i] = sum_k a[i * lda + k] b[i * ldb + k] for i < 4, D a multiple
// of 16 (the heads of one query and one key: lda = ldb = D; one query and four keys: lda = 0): the
// same floats as dot() of each, the products summed in the same order and the lanes added by
// hsum's tree, but the four trees share their shuffles (a 128-bit lane of the last vector holds
// each sum).
inline void dot4(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t D, float* out) {
#if defined(__AVX512F__)
  constexpr __mmask16 kAll = 0xffff;  // the maskz forms, as in hsum: GCC 12 warns of the others
  __m512 acc[4];
  for (int i = 0; i < 4; ++i) {
    acc[i] = _mm512_setzero_ps();
    for (int64_t k = 0; k < D; k += 16)
      acc[i] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i * lda + k), _mm512_loadu_ps(b + i * ldb + k),
                               acc[i]);
  }
  // hsum's tree: x = (L0 + L1) + (L2 + L3) over the 128-bit lanes L, then x0 + x2, x1 + x3,
  // then the two added. [L0 + L1, L2 + L3] of two accumulators in one register:
  const __m512 m01 = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(kAll, acc[0], acc[1], 0x88),
                                   _mm512_maskz_shuffle_f32x4(kAll, acc[0], acc[1], 0xDD));
  const __m512 m23 = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(kAll, acc[2], acc[3], 0x88),
                                   _mm512_maskz_shuffle_f32x4(kAll, acc[2], acc[3], 0xDD));
  // lane i holds x of accumulator i
  const __m512 x = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(kAll, m01, m23, 0x88),
                                 _mm512_maskz_shuffle_f32x4(kAll, m01, m23, 0xDD));
  const __m512 y = _mm512_add_ps(x, _mm512_maskz_permute_ps(kAll, x, 0xEE));  // [x2, x3, x2, x3]
  const __m512 z = _mm512_add_ps(y, _mm512_maskz_permute_ps(kAll, y, 0xF5));  // [y1, y1, y3, y3]
  alignas(64) float t[16];
  _mm512_store_ps(t, z);
  for (int i = 0; i < 4; ++i) out[i] = t[4 * i];
#else
  for (int i = 0; i < 4; ++i) out[i] = dot(a + i * lda, b + i * ldb, D);
#endif
}
inline float sum(const float* x, int64_t n) {
#if defined(__AVX512F__)
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) acc = _mm512_add_ps(acc, _mm512_loadu_ps(x + k));
  if (k < n)
    acc = _mm512_add_ps(acc,
                        _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (n - k)) - 1u), x + k));
  return hsum(acc);
#else
  float s = 0.f;
#pragma omp simd reduction(+ : s)
  for (int64_t k = 0; k < n; ++k) s += x[k];
  return s;
#endif
}

// exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2];
// exp(r) by the Cephes degree-6 polynomial. Below -87.3 the result is 0 (also for -inf); NaN
// stays NaN (clamped first, so that no NaN is converted to an integer).
inline float exp(float x) {
  const float hi = 88.3762626647949f, lo = -87.3365447504f;
  float xc = x < hi ? (x > lo ? x : lo) : hi;  // NaN: hi
  float fn = __builtin_floorf(xc * 1.44269504088896341f + 0.5f);
  float r = xc - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float z = r * r;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  float y = p * z + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(fn) + 127) << 23;
  float scale = std::bit_cast<float>(bits);
  float out = y * scale;
  out = x < lo ? 0.f : out;
  return x == x ? out : x;
}

#if defined(__AVX512F__)
// exp()'s steps on 16 lanes: r = x - n ln 2 (n integral; ln 2 in two parts), and the Cephes
// polynomial P with e^r = 1 + r + r^2 P(r)
inline __m512 exp_reduce16(__m512 x, __m512 n) {
  const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  return _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
}
inline __m512 exp_poly16(__m512 r) {
  __m512 p = _mm512_set1_ps(1.9875691500E-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507E-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073E-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894E-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459E-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201E-1f));
  return p;
}
#endif

// sum_j exp(x_j - m) for x_j - m <= 0 (m the row's maximum, or above it; NaN stays NaN): log Z
// of beam search's output rows, 10 % of its time. exp() above, lane by lane, but written for
// that range: no upper clamp, 2^n by vscalefps instead of its exponent bits, and the lanes below
// -87.3 left out of the sum by a mask (exp() is 0 there) instead of blends: 20 instructions a
// vector where GCC 12 made 36 of the loop with exp(), 1.6x faster (512 entries: 84 against
// 135 ns, Zen 5). The sum's order is that loop's: lane i of one accumulator adds the entries
// 16 q + i in turn, the tail's entries go into lane 0 one by one, then the lanes are added 0 to
// 15; so the floats are the same.
inline float sum_exp(const float* x, int64_t n, float m) {
#if defined(__AVX512F__)
  constexpr __mmask16 kAll = 0xffff;  // the maskz forms, as in hsum: GCC 12 warns of the others
  const __m512 lo = _mm512_set1_ps(-87.3365447504f), mv = _mm512_set1_ps(m);
  // exp(d) of 16 lanes where `in` (d >= -87.3 or NaN), as exp() computes it
  const auto exp16 = [&](__m512 d, __mmask16* in) {
    *in = _mm512_cmp_ps_mask(d, lo, _CMP_NLT_UQ);
    const __m512 xc = _mm512_maskz_max_ps(kAll, lo, d);  // (a NaN d is returned: it stays NaN)
    const __m512 fn = _mm512_maskz_roundscale_ps(
        kAll, _mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(0.5f)),
        _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 r = exp_reduce16(xc, fn);
    const __m512 y =
        _mm512_add_ps(_mm512_fmadd_ps(exp_poly16(r), _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.f));
    return _mm512_maskz_scalef_ps(kAll, y, fn);  // y 2^fn
  };
  __m512 acc = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __mmask16 in = 0;
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + j), mv), &in);
    acc = _mm512_mask_add_ps(acc, in, acc, e);
  }
  alignas(64) float lane[16];
  _mm512_store_ps(lane, acc);
  if (j < n) {
    const auto tail = static_cast<__mmask16>((1u << (n - j)) - 1u);
    __mmask16 in = 0;
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + j), mv), &in);
    alignas(64) float t[16];
    _mm512_store_ps(t, _mm512_maskz_mov_ps(in, e));
    for (int64_t i = 0; i < n - j; ++i) lane[0] += t[i];
  }
  float s = 0.f;
  for (float v : lane) s += v;
  return s;
#else
  float s = 0.f;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j) s += exp(x[j] - m);
  return s;
#endif
}

// tanh: the Cephes odd polynomial near 0 (no cancellation), 1 - 2 / (e^{2|x|} + 1) elsewhere.
inline float tanh(float x) {
  float ax = x < 0 ? -x : x;
  float z = x * x;
  float small = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z - 5.37397155531E-2f) * z +
                  1.33314422036E-1f) *
                     z -
                 3.33332819422E-1f) *
                    z * x +
                x;
  float e = exp(2.f * (ax > 15.f ? 15.f : ax));  // tanh(15) rounds to 1
  float big = 1.f - 2.f / (e + 1.f);
  big = x < 0 ? -big : big;
  return ax < 0.625f ? small : big;
}

#if defined(__AVX512F__)
// tanh of 16 lanes at once, for the kernels whose time is tanh (the additive energy): one
// formula, where tanh() above computes two branches and a division in every lane,
//   tanh(x) = sign(x) m / (m + 2),  m = e^{2|x|} - 1 = 2^n (e^r - 1) + (2^n - 1)
// with 2|x| = n ln 2 + r as in exp(), e^r - 1 = r + r^2 P(r) (exp's polynomial without its 1,
// so that nothing cancels near 0), |x| clamped to 9 (tanh(9) rounds to 1), and 1 / (m + 2) as
// rcp14 with one Newton step. Relative error below 3e-7 (the tests check it against doubles);
// NaN stays NaN (min returns its second operand for NaN).
inline __m512 tanh16(__m512 x) {
  // the masked forms with every lane set: the unmasked ones pass GCC 12 an undefined register
  // it warns of (as hsum above), for the same instruction
  constexpr __mmask16 all = 0xffff;
  const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(INT32_MIN));
  const __m512 nine = _mm512_set1_ps(9.f);
  const __m512 ax = _mm512_mask_min_ps(nine, all, nine, _mm512_andnot_ps(sign, x));
  const __m512 y = _mm512_add_ps(ax, ax);  // 2|x|
  const __m512 fn = _mm512_mul_ps(y, _mm512_set1_ps(1.44269504088896341f));
  const __m512 n =
      _mm512_mask_roundscale_ps(fn, all, fn, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = exp_reduce16(y, n);
  const __m512 p = exp_poly16(r);
  const __m512 em1 = _mm512_fmadd_ps(_mm512_mul_ps(r, r), p, r);  // e^r - 1
  const __m512 one = _mm512_set1_ps(1.f), two = _mm512_set1_ps(2.f);
  const __m512 pow2n = _mm512_mask_scalef_ps(one, all, one, n);  // 2^n
  const __m512 m =
      _mm512_add_ps(_mm512_mask_scalef_ps(em1, all, em1, n), _mm512_sub_ps(pow2n, one));
  const __m512 d = _mm512_add_ps(m, two);
  __m512 inv = _mm512_mask_rcp14_ps(d, all, d);
  inv = _mm512_mul_ps(inv, _mm512_fnmadd_ps(d, inv, two));  // 1 / d to ~2^-27
  return _mm512_or_ps(_mm512_mul_ps(m, inv), _mm512_and_ps(sign, x));
}
#endif

// log(x) for positive normal x (the filterbank's energies, floored at FLT_EPSILON): x = m 2^e
// with m in [sqrt(1/2), sqrt(2)), log x = log1p(m - 1) + e ln 2, log1p by the Cephes degree-9
// polynomial; ln 2 split in two so that e ln 2 adds no rounding. Error below 3e-7 max(1, |log x|)
// (a few tenths of a float ulp of the result). Zero, negatives, subnormals, infinities and NaN
// are not handled (the callers floor first).
inline float log(float x) {
  const auto bits = std::bit_cast<int32_t>(x);
  float e = static_cast<float>(((bits >> 23) & 0xff) - 126);
  float m = std::bit_cast<float>((bits & 0x807fffff) | 0x3f000000);  // [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1.f : e;
  m = low ? m + m - 1.f : m - 1.f;
  const float z = m * m;
  float y = 7.0376836292E-2f;
  y = y * m - 1.1514610310E-1f;
  y = y * m + 1.1676998740E-1f;
  y = y * m - 1.2420140846E-1f;
  y = y * m + 1.4249322787E-1f;
  y = y * m - 1.6668057665E-1f;
  y = y * m + 2.0000714765E-1f;
  y = y * m - 2.4999993993E-1f;
  y = y * m + 3.3333331174E-1f;
  y = y * m * z;
  y += -2.12194440e-4f * e;
  y += -0.5f * z;
  return m + y + 0.693359375f * e;
}

// The two gradients of y = s w (a scalar input s, weights w [n]) from dy = g [n] in one pass:
// dw += s g, and the returned dL/ds = g . w (conv1d's one-channel taps, location attention's
// filters).
inline float scaled_add_dot(int64_t n, float s, const float* g, const float* w, float* dw) {
  float dot = 0.f;
#pragma omp simd reduction(+ : dot)
  for (int64_t i = 0; i < n; ++i) {
    dw[i] += g[i] * s;
    dot += g[i] * w[i];
  }
  return dot;
}

// sigmoid(x) = 1 / (1 + e^{-x})
inline float sigmoid(float x) {
  return 1.f / (1.f + exp(-x));
}

// GELU, tanh form (Hendrycks & Gimpel 2016): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
inline constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)
inline float gelu(float x) {
  return 0.5f * x * (1.f + tanh(kGeluC * (x + 0.044715f * x * x * x)));
}
// d/dx GELU = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
inline float gelu_grad(float x) {
  float t = tanh(kGeluC * (x + 0.044715f * x * x * x));
  return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * kGeluC * (1.f + 0.134145f * x * x);
}

}  // namespace heed::vmath
