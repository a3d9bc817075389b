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

#if defined(__AVX512F__)
// The location term in registers: K + q + sum_l Ut_l f_l on the lanes of m at a (U f is never
// stored; f_l broadcasts from memory into each multiply-add)
__m512 location_pre(__mmask16 m, const float* k, const float* q, const float* Ut, const float* f,
                    int64_t A, int64_t L, int64_t a) {
  __m512 pre = _mm512_add_ps(_mm512_maskz_loadu_ps(m, k + a), _mm512_maskz_loadu_ps(m, q + a));
  for (int64_t l = 0; l < L; ++l)
    pre = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, Ut + l * A + a), _mm512_set1_ps(f[l]), pre);
  return pre;
}
constexpr int64_t kRegisterFeatures = 16;  // the backward's df sums stay in registers up to this
#endif

// qf = q + U f: one entry's query and location term  [A]
void query_plus_location(const float* q, const float* Ut, const float* f, int64_t A, int64_t L,
                         float* qf) {
  std::copy(q, q + A, qf);
  for (int64_t l = 0; l < L; ++l) {
    const float fl = f[l];
    const float* u = Ut + l * A;
#pragma omp simd
    for (int64_t a = 0; a < A; ++a) qf[a] += u[a] * fl;
  }
}

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

// The location term folds into the query of each entry (qf = q_b + U f_bj), so that the entry is
// the additive one above: e_bj = tanh_dot(K_bj, qf), and its backward gives d = de v (1 - t^2)
// (as dq of entry_backward, on a zeroed row) from which
//   dq_b += d,  dUt_l += f_bjl d,  df_bjl += Ut_l . d
void location_energy_forward(int64_t B, int64_t S, int64_t A, int64_t L, const float* K,
                             const float* f, const float* Ut, const float* q, const float* v,
                             float* e, float* scratch) {
  parallel_for(B, grain_for(kSerialWork, (8 + 2 * L) * S * A), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      float* qf = scratch + b * A;
      for (int64_t j = 0; j < S; ++j) {
        const int64_t bj = b * S + j;
#if defined(__AVX512F__)
        __m512 acc = _mm512_setzero_ps();
        for (int64_t a = 0; a < A; a += 16) {
          const __mmask16 m = lanes(A - a);
          const __m512 t =
              vmath::tanh16(location_pre(m, K + bj * A, q + b * A, Ut, f + bj * L, A, L, a));
          acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, v + a), t, acc);
        }
        e[bj] = vmath::hsum(acc);
        (void)qf;
#else
        query_plus_location(q + b * A, Ut, f + bj * L, A, L, qf);
        e[bj] = tanh_dot(K + bj * A, qf, v, A);
#endif
      }
    }
  });
}

int64_t location_energy_scratch(int64_t B, int64_t A, int64_t L) {
  return B * (3 + L) * A;
}

void location_energy_backward(int64_t B, int64_t S, int64_t A, int64_t L, const float* K,
                              const float* f, const float* Ut, const float* q, const float* v,
                              const float* de, const LocationEnergyGrads& d, float* scratch) {
  // per row b: qf [A], the entry's d [A], then its sums for dv [A] and dUt [L, A]
  const int64_t row = (3 + L) * A;
  const EntryBackward entry = kEntryBackward[4 * (d.dv != nullptr) + 2 * (d.dK != nullptr) + 1];
  const bool location_grads = d.dUt || d.df;
  parallel_for(B, grain_for(kSerialWork, (12 + 4 * L) * S * A), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      float* qf = scratch + b * row;
      float* dd = qf + A;
      float* dvb = dd + A;
      float* dUtb = dvb + A;
      std::fill(dvb, dvb + (1 + L) * A, 0.f);
      for (int64_t j = 0; j < S; ++j) {
        const int64_t bj = b * S + j;
        const float g = de[bj];
        if (g == 0.f) continue;  // padding, or entries outside a window
        const float* fbj = f + bj * L;
#if defined(__AVX512F__)
        if (L <= kRegisterFeatures) {  // one pass: t, d and every sum of the entry in registers
          const __m512 gg = _mm512_set1_ps(g);
          __m512 dfs[kRegisterFeatures];
          for (int64_t l = 0; l < L; ++l) dfs[l] = _mm512_setzero_ps();
          for (int64_t a = 0; a < A; a += 16) {
            const __mmask16 m = lanes(A - a);
            const __m512 t =
                vmath::tanh16(location_pre(m, K + bj * A, q + b * A, Ut, fbj, A, L, a));
            if (d.dv)
              _mm512_mask_storeu_ps(dvb + a, m,
                                    _mm512_fmadd_ps(gg, t, _mm512_maskz_loadu_ps(m, dvb + a)));
            const __m512 gv = _mm512_mul_ps(gg, _mm512_maskz_loadu_ps(m, v + a));
            const __m512 dd_a = _mm512_fnmadd_ps(_mm512_mul_ps(gv, t), t, gv);  // g v (1 - t^2)
            if (d.dK) {
              float* dk = d.dK + bj * A + a;
              _mm512_mask_storeu_ps(dk, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dk), dd_a));
            }
            if (d.dq) {
              float* dq = d.dq + b * A + a;
              _mm512_mask_storeu_ps(dq, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dq), dd_a));
            }
            if (!location_grads) continue;
            for (int64_t l = 0; l < L; ++l) {
              float* du = dUtb + l * A + a;
              _mm512_mask_storeu_ps(
                  du, m,
                  _mm512_fmadd_ps(dd_a, _mm512_set1_ps(fbj[l]), _mm512_maskz_loadu_ps(m, du)));
              dfs[l] = _mm512_fmadd_ps(dd_a, _mm512_maskz_loadu_ps(m, Ut + l * A + a), dfs[l]);
            }
          }
          if (d.df)
            for (int64_t l = 0; l < L; ++l) d.df[bj * L + l] += vmath::hsum(dfs[l]);
          continue;
        }
#endif
        query_plus_location(q + b * A, Ut, fbj, A, L, qf);
        std::fill(dd, dd + A, 0.f);
        entry(K + bj * A, qf, v, g, A, dvb, d.dK ? d.dK + bj * A : nullptr, dd);
        if (d.dq) {
          float* dqb = d.dq + b * A;
#pragma omp simd
          for (int64_t a = 0; a < A; ++a) dqb[a] += dd[a];
        }
        if (!location_grads) continue;
        for (int64_t l = 0; l < L; ++l) {
          const float* u = Ut + l * A;
          float* du = dUtb + l * A;
          const float dot = vmath::scaled_add_dot(A, fbj[l], dd, u, du);
          if (d.df) d.df[bj * L + l] += dot;
        }
      }
    }
  });
  // the rows' sums in row order: the same bits on any thread count
  for (int64_t b = 0; b < B; ++b) {
    const float* dvb = scratch + b * row + 2 * A;
    if (d.dv)
      for (int64_t a = 0; a < A; ++a) d.dv[a] += dvb[a];
    if (d.dUt)
      for (int64_t k = 0; k < L * A; ++k) d.dUt[k] += dvb[A + k];
  }
}

}  // namespace heed::kernels
