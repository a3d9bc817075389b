// One-dimensional convolution as GEMMs over shifted views (see the header).
#include "heed/kernels/conv1d.h"

#include <algorithm>

#include "heed/kernels/gemm.h"
#include "heed/kernels/parallel.h"

namespace heed::kernels {

void conv1d_columns(const Conv1dShape& s, const float* x, float* cols) {
  const int64_t row = s.k * s.C_in;
  parallel_for(s.B * s.T, grain_for(kSerialWork, row), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / s.T, t = r % s.T, len = s.length(b);
      float* out = cols + r * row;
      for (int64_t i = 0; i < s.k; ++i) {
        const int64_t u = t + s.offset(i);
        if (u >= 0 && u < len)
          std::copy_n(x + (b * s.T + u) * s.C_in, s.C_in, out + i * s.C_in);
        else
          std::fill_n(out + i * s.C_in, s.C_in, 0.f);
      }
    }
  });
}

void conv1d_forward(const Conv1dShape& s, const float* cols, const float* w, const float* bias,
                    float* y) {
  const int64_t N = s.B * s.T, K = s.k * s.C_in;
  if (bias) {
    for (int64_t r = 0; r < N; ++r) std::copy_n(bias, s.C_out, y + r * s.C_out);
  }
  // y [N, C_out] (+)= cols [N, K] w^T [K, C_out]
  gemm(false, true, N, s.C_out, K, 1.f, cols, K, w, K, bias ? 1.f : 0.f, y, s.C_out);
}

void conv1d_backward(const Conv1dShape& s, const float* cols, const float* w, const float* dy,
                     float* dx, float* dw, float* dbias, float* scratch) {
  const int64_t N = s.B * s.T, K = s.k * s.C_in;
  if (dw) gemm(true, false, s.C_out, K, N, 1.f, dy, s.C_out, cols, K, 1.f, dw, K);  // dy^T cols
  if (dbias)
    for (int64_t r = 0; r < N; ++r)
      for (int64_t o = 0; o < s.C_out; ++o) dbias[o] += dy[r * s.C_out + o];
  if (!dx) return;
  gemm(false, false, N, K, s.C_out, 1.f, dy, s.C_out, w, K, 0.f, scratch, K);  // dcols = dy w
  // scatter: x[b, u] gathers from the rows t = u - off_i of every tap i (one sequence per
  // thread, so no two threads add to one row)
  parallel_for(s.B, grain_for(kSerialWork, s.T * K), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t len = s.length(b);
      for (int64_t t = 0; t < s.T; ++t) {
        const float* g = scratch + (b * s.T + t) * K;
        for (int64_t i = 0; i < s.k; ++i) {
          const int64_t u = t + s.offset(i);
          if (u < 0 || u >= len) continue;
          float* d = dx + (b * s.T + u) * s.C_in;
          const float* gi = g + i * s.C_in;
          for (int64_t c = 0; c < s.C_in; ++c) d[c] += gi[c];
        }
      }
    }
  });
}

}  // namespace heed::kernels
