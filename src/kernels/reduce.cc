// Axis reductions, threaded over the outer axis.
// Leaves out: pairwise summation (float accumulation is enough at sequence lengths).
#include "heed/kernels/reduce.h"

#include "heed/kernels/parallel.h"

namespace heed::kernels {
namespace {
constexpr int64_t kGrain = int64_t{1} << 15;  // elements per chunk, as the element-wise kernels
}  // namespace

void sum_axis(const float* x, float* y, int64_t outer, int64_t n, int64_t inner) {
  parallel_for(outer, grain_for(kGrain, n * inner), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      float* yo = y + o * inner;
      for (int64_t i = 0; i < inner; ++i) yo[i] = 0.f;
      for (int64_t k = 0; k < n; ++k) {
        const float* xk = x + (o * n + k) * inner;
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) yo[i] += xk[i];
      }
    }
  });
}

void sum_axis_backward(const float* dy, float* dx, int64_t outer, int64_t n, int64_t inner) {
  parallel_for(outer, grain_for(kGrain, n * inner), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t k = 0; k < n; ++k) {
        float* dk = dx + (o * n + k) * inner;
        const float* g = dy + o * inner;
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) dk[i] += g[i];
      }
  });
}

void max_axis(const float* x, float* y, int32_t* arg, int64_t outer, int64_t n, int64_t inner) {
  parallel_for(outer, grain_for(kGrain, n * inner), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      float* yo = y + o * inner;
      int32_t* ao = arg + o * inner;
      const float* x0 = x + o * n * inner;
      for (int64_t i = 0; i < inner; ++i) {
        yo[i] = x0[i];
        ao[i] = 0;
      }
      for (int64_t k = 1; k < n; ++k) {
        const float* xk = x0 + k * inner;
        for (int64_t i = 0; i < inner; ++i)
          if (xk[i] > yo[i]) {
            yo[i] = xk[i];
            ao[i] = static_cast<int32_t>(k);
          }
      }
    }
  });
}

void max_axis_backward(const float* dy, const int32_t* arg, float* dx, int64_t outer, int64_t n,
                       int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      dx[(o * n + arg[o * inner + i]) * inner + i] += dy[o * inner + i];
}

}  // namespace heed::kernels
