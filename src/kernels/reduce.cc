// Axis reductions, threaded over the outer axis; a row's top k.
// Leaves out: pairwise summation (float accumulation is enough at sequence lengths).
#include "heed/kernels/reduce.h"

#include <algorithm>
#include <vector>

#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

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

void top_k(const float* x, int64_t n, int64_t k, int32_t* idx) {
  check(k >= 1 && k <= n, "top_k: k = ", k, " of ", n);
  thread_local std::vector<float> values;
  values.resize(static_cast<size_t>(k));
  TopK best{k, idx, values.data()};
  best.add(x, n, 0);
}

void TopK::add(const float* x, int64_t n, int32_t offset) {
  constexpr int64_t kBlock = 64;  // 16 and 256 measured slower (engine_bench BM_Top5)
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t j1 = std::min(n, j0 + kBlock);
    // an entry equal to the k-th comes after it (its index is higher): only greater ones enter
    if (filled == k && vmath::max(x + j0, j1 - j0, values[k - 1]) == values[k - 1]) continue;
    for (int64_t j = j0; j < j1; ++j) {
      if (filled == k && !(x[j] > values[k - 1])) continue;
      int64_t at = filled < k ? filled++ : k - 1;  // the slot freed at the end, then sift up
      while (at > 0 && x[j] > values[at - 1]) {
        ids[at] = ids[at - 1];
        values[at] = values[at - 1];
        --at;
      }
      ids[at] = offset + static_cast<int32_t>(j);
      values[at] = x[j];
    }
  }
}

}  // namespace heed::kernels
