// The fused context vector (see the header).
#include "heed/kernels/context.h"

#include <algorithm>

#include "heed/kernels/parallel.h"

namespace heed::kernels {
namespace {
constexpr int64_t kBlock = 64;  // the forward's columns per pass: four AVX-512 registers
}  // namespace

void context_forward(int64_t B, int64_t S, int64_t D, const float* alpha, const float* h,
                     float* c) {
  parallel_for(B, grain_for(kSerialWork, 2 * S * D), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      // kBlock columns at a time summed over every j in registers, stored once
      for (int64_t d0 = 0; d0 < D; d0 += kBlock) {
        const int64_t n = std::min(kBlock, D - d0);
        float acc[kBlock] = {};
        for (int64_t j = 0; j < S; ++j) {
          const float a = alpha[b * S + j];
          if (a == 0.f) continue;
          const float* hj = h + (b * S + j) * D + d0;
          if (n == kBlock) {
#pragma omp simd
            for (int64_t d = 0; d < kBlock; ++d) acc[d] += a * hj[d];
          } else {
            for (int64_t d = 0; d < n; ++d) acc[d] += a * hj[d];
          }
        }
        std::copy(acc, acc + n, c + b * D + d0);
      }
    }
  });
}

void context_backward(int64_t B, int64_t S, int64_t D, const float* alpha, const float* h,
                      const float* dc, float* dalpha, float* dh) {
  parallel_for(B, grain_for(kSerialWork, 4 * S * D), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* dcb = dc + b * D;
      for (int64_t j = 0; j < S; ++j) {
        const int64_t bj = b * S + j;
        const float* hj = h + bj * D;
        if (dalpha) {
          float dot = 0.f;
#pragma omp simd reduction(+ : dot)
          for (int64_t d = 0; d < D; ++d) dot += dcb[d] * hj[d];
          dalpha[bj] += dot;
        }
        const float a = alpha[bj];
        if (!dh || a == 0.f) continue;
        float* dhj = dh + bj * D;
#pragma omp simd
        for (int64_t d = 0; d < D; ++d) dhj[d] += a * dcb[d];
      }
    }
  });
}

}  // namespace heed::kernels
