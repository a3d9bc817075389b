// The fused additive energy (see the header).
#include "heed/kernels/additive.h"

#include <algorithm>

#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"

namespace heed::kernels {
namespace {

#if defined(__AVX512F__)
// The lanes of a 16-wide step with `left` entries to go: all, or the first `left`.
__mmask16 lanes(int64_t left) {
  return static_cast<__mmask16>(left >= 16 ? 0xffffu : (1u << left) - 1u);
}
// tanh(k + q) on the lanes of m (masked lanes read 0: tanh 0)
__m512 tanh_sum(__mmask16 m, const float* k, const float* q) {
  return vmath::tanh16(_mm512_add_ps(_mm512_maskz_loadu_ps(m, k), _mm512_maskz_loadu_ps(m, q)));
}
#endif

// sum_a v_a tanh(k_a + q_a). Its own function so that the loop sees its pointers as arguments:
// written inside the lambda below, GCC 12 reloaded v through the closure at every element (the
// simd reduction's scratch clobbers memory) and left the loop scalar (28 % of the RNN's batched
// greedy decoding on a Xeon). With AVX-512, 16 lanes a step through vmath::tanh16, the last
// step masked (masked lanes load 0, and v's 0 there adds nothing).
float tanh_dot(const float* k, const float* q, const float* v, int64_t A) {
#if defined(__AVX512F__)
  __m512 acc = _mm512_setzero_ps();
  for (int64_t a = 0; a < A; a += 16) {
    const __mmask16 m = lanes(A - a);
    const __m512 t = tanh_sum(m, k + a, q + a);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, v + a), t, acc);
  }
  return vmath::hsum(acc);
#else
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t a = 0; a < A; ++a) sum += v[a] * vmath::tanh(k[a] + q[a]);
  return sum;
#endif
}

// One entry's backward in one pass over a (its rows as arguments, as in tanh_dot):
//   t = tanh(k + q),  dv += g t,  d = g v (1 - t^2),  dk += d,  dq += d
// each output there or not by template, so that the loop has no branch and vectorises.
template <bool kDv, bool kDk, bool kDq>
void entry_backward(const float* k, const float* q, const float* v, float g, int64_t A, float* dv,
                    float* dk, float* dq) {
#if defined(__AVX512F__)
  const __m512 gg = _mm512_set1_ps(g);
  for (int64_t a = 0; a < A; a += 16) {
    const __mmask16 m = lanes(A - a);
    const __m512 t = tanh_sum(m, k + a, q + a);
    if constexpr (kDv)
      _mm512_mask_storeu_ps(dv + a, m, _mm512_fmadd_ps(gg, t, _mm512_maskz_loadu_ps(m, dv + a)));
    const __m512 gv = _mm512_mul_ps(gg, _mm512_maskz_loadu_ps(m, v + a));
    const __m512 d = _mm512_fnmadd_ps(_mm512_mul_ps(gv, t), t, gv);  // g v (1 - t^2)
    if constexpr (kDk)
      _mm512_mask_storeu_ps(dk + a, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dk + a), d));
    if constexpr (kDq)
      _mm512_mask_storeu_ps(dq + a, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dq + a), d));
  }
#else
#pragma omp simd
  for (int64_t a = 0; a < A; ++a) {
    const float t = vmath::tanh(k[a] + q[a]);
    if constexpr (kDv) dv[a] += g * t;
    const float d = g * v[a] * (1.f - t * t);
    if constexpr (kDk) dk[a] += d;
    if constexpr (kDq) dq[a] += d;
  }
#endif
}

using EntryBackward = void (*)(const float*, const float*, const float*, float, int64_t, float*,
                               float*, float*);

// entry_backward for the outputs wanted: index 4 dv + 2 dk + dq
constexpr EntryBackward kEntryBackward[8] = {
    entry_backward<false, false, false>, entry_backward<false, false, true>,
    entry_backward<false, true, false>,  entry_backward<false, true, true>,
    entry_backward<true, false, false>,  entry_backward<true, false, true>,
    entry_backward<true, true, false>,   entry_backward<true, true, true>};

}  // namespace

void additive_energy_forward(int64_t B, int64_t S, int64_t A, const float* K, const float* q,
                             const float* v, float* e) {
  parallel_for(B, grain_for(kSerialWork, 8 * S * A), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* qb = q + b * A;
      for (int64_t j = 0; j < S; ++j) {
        e[b * S + j] = tanh_dot(K + (b * S + j) * A, qb, v, A);
      }
    }
  });
}

void additive_energy_backward(int64_t B, int64_t S, int64_t A, const float* K, const float* q,
                              const float* v, const float* de, float* dK, float* dq, float* dv,
                              float* scratch) {
  if (dv) std::fill(scratch, scratch + B * A, 0.f);
  const EntryBackward entry =
      kEntryBackward[4 * (dv != nullptr) + 2 * (dK != nullptr) + (dq != nullptr)];
  parallel_for(B, grain_for(kSerialWork, 12 * S * A), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* qb = q + b * A;
      float* dqb = dq ? dq + b * A : nullptr;
      float* dvb = dv ? scratch + b * A : nullptr;
      for (int64_t j = 0; j < S; ++j) {
        const float g = de[b * S + j];
        if (g == 0.f) continue;  // padding, or entries outside a window
        entry(K + (b * S + j) * A, qb, v, g, A, dvb, dK ? dK + (b * S + j) * A : nullptr, dqb);
      }
    }
  });
  if (dv)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t a = 0; a < A; ++a) dv[a] += scratch[b * A + a];
}

}  // namespace heed::kernels
