// Layer normalisation kernels; the backward follows llm.c's derivation (doc/layernorm).
// Leaves out: fusion with the residual add (a model-level choice).
#include "heed/kernels/norm.h"

#include <cmath>

#include "heed/kernels/parallel.h"

namespace heed::kernels {

void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y,
                        float* mean, float* rstd, int64_t N, int64_t D, float eps) {
  parallel_for(N, grain_for(8192, D), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * D;
      float* yr = y + r * D;
      float s = 0.f;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < D; ++j) s += xr[j];
      float mu = s / static_cast<float>(D);
      float v = 0.f;
#pragma omp simd reduction(+ : v)
      for (int64_t j = 0; j < D; ++j) v += (xr[j] - mu) * (xr[j] - mu);
      float rs = 1.f / std::sqrt(v / static_cast<float>(D) + eps);
#pragma omp simd
      for (int64_t j = 0; j < D; ++j) yr[j] = gamma[j] * ((xr[j] - mu) * rs) + beta[j];
      mean[r] = mu;
      rstd[r] = rs;
    }
  });
}

void layer_norm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                         const float* rstd, float* dx, bool accumulate_dx, float* dgamma,
                         float* dbeta, int64_t N, int64_t D) {
  if (dx) {
    parallel_for(N, grain_for(8192, D), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float *xr = x + r * D, *gr = dy + r * D;
        float* dr = dx + r * D;
        float mu = mean[r], rs = rstd[r];
        float m1 = 0.f, m2 = 0.f;  // mean(dxhat), mean(dxhat * xhat)
#pragma omp simd reduction(+ : m1, m2)
        for (int64_t j = 0; j < D; ++j) {
          float dxhat = gr[j] * gamma[j];
          m1 += dxhat;
          m2 += dxhat * (xr[j] - mu) * rs;
        }
        m1 /= static_cast<float>(D);
        m2 /= static_cast<float>(D);
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) {
          float xhat = (xr[j] - mu) * rs;
          float d = rs * (gr[j] * gamma[j] - m1 - xhat * m2);
          dr[j] = accumulate_dx ? dr[j] + d : d;
        }
      }
    });
  }
  if (dgamma || dbeta) {  // column sums: threads own columns, so no two write the same one
    parallel_for(D, 64, [&](int64_t c0, int64_t c1) {
      for (int64_t r = 0; r < N; ++r) {
        const float *xr = x + r * D, *gr = dy + r * D;
        float mu = mean[r], rs = rstd[r];
        for (int64_t j = c0; j < c1; ++j) {
          if (dgamma) dgamma[j] += gr[j] * (xr[j] - mu) * rs;
          if (dbeta) dbeta[j] += gr[j];
        }
      }
    });
  }
}

}  // namespace heed::kernels
