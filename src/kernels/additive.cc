// The fused additive energy (see the header).
#include "heed/kernels/additive.h"

#include <algorithm>
#include <vector>

#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"

namespace heed::kernels {
namespace {

// sum_a v_a tanh(k_a + q_a). Its own function so that the loop sees its pointers as arguments:
// written inside the lambda below, GCC 12 reloaded v through the closure at every element (the
// simd reduction's scratch clobbers memory) and left the loop scalar (28 % of the RNN's batched
// greedy decoding on a Xeon).
float tanh_dot(const float* k, const float* q, const float* v, int64_t A) {
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t a = 0; a < A; ++a) sum += v[a] * vmath::tanh(k[a] + q[a]);
  return sum;
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
  parallel_for(B, grain_for(kSerialWork, 12 * S * A), [&](int64_t b0, int64_t b1) {
    std::vector<float> t(static_cast<size_t>(A));
    for (int64_t b = b0; b < b1; ++b) {
      const float* qb = q + b * A;
      float* dqb = dq ? dq + b * A : nullptr;
      float* dvb = dv ? scratch + b * A : nullptr;
      for (int64_t j = 0; j < S; ++j) {
        const float g = de[b * S + j];
        if (g == 0.f) continue;  // padding, or entries outside a window
        const float* k = K + (b * S + j) * A;
        float* dk = dK ? dK + (b * S + j) * A : nullptr;
#pragma omp simd
        for (int64_t a = 0; a < A; ++a) t[a] = vmath::tanh(k[a] + qb[a]);
        if (dvb)
          for (int64_t a = 0; a < A; ++a) dvb[a] += g * t[a];
        for (int64_t a = 0; a < A; ++a) t[a] = g * v[a] * (1.f - t[a] * t[a]);  // d e / d (K + q)
        if (dk)
          for (int64_t a = 0; a < A; ++a) dk[a] += t[a];
        if (dqb)
          for (int64_t a = 0; a < A; ++a) dqb[a] += t[a];
      }
    }
  });
  if (dv)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t a = 0; a < A; ++a) dv[a] += scratch[b * A + a];
}

}  // namespace heed::kernels
