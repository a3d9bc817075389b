// int8 inference GEMM (see the header).
// Leaves out: saturation handling beyond [-127, 127] (symmetric scales never reach -128).
#include "heed/kernels/quantize.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "heed/kernels/flops.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed::kernels {

void quantize_rows(const float* x, int64_t M, int64_t K, int8_t* q, float* scale) {
  parallel_for(M, 16, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) {
      const float* r = x + m * K;
      const float amax = vmath::max_abs(r, K);
      // s = max|x| / 127; q = round(x / s)
      const float s = amax > 0.f ? amax / 127.f : 1.f, inv = 1.f / s;
      int8_t* qr = q + m * K;
      for (int64_t k = 0; k < K; ++k) {  // round half away from zero; |y| <= 127.5 - ulp
        float y = r[k] * inv;
        qr[k] = static_cast<int8_t>(static_cast<int32_t>(y + std::copysign(0.5f, y)));
      }
      scale[m] = s;
    }
  });
}

bool keep_int8_off_amx() {
  static const bool capped = [] {
    if (std::getenv("ONEDNN_MAX_CPU_ISA") || std::getenv("DNNL_MAX_CPU_ISA")) return false;
    return dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx512_core_bf16) == dnnl_success;
  }();
  return capped;
}

bool int8_exact() {
  static const bool exact = [] {
    keep_int8_off_amx();  // the query below fixes oneDNN's ISA: the cap must come first
    // cpu_isa values are sets of feature bits: VNNI in its AVX512 or its AVX2 (VEX) form
    const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    const auto has = [isa](dnnl_cpu_isa_t f) {
      return (isa & static_cast<unsigned>(f)) == static_cast<unsigned>(f);
    };
    return has(dnnl_cpu_isa_avx512_core_vnni) || has(dnnl_cpu_isa_avx2_vnni);
  }();
  return exact;
}

Int8Matrix quantize_matrix(const float* w, int64_t N, int64_t K) {
  Int8Matrix m{N,
               K,
               std::vector<int8_t>(static_cast<size_t>(N * K)),
               std::vector<float>(static_cast<size_t>(N)),
               {}};
  quantize_rows(w, N, K, m.q.data(), m.scale.data());
  if (!int8_exact()) m.q_float.assign(m.q.begin(), m.q.end());
  return m;
}

void gemm_int8(int64_t M, const int8_t* qx, const float* sx, const Int8Matrix& w, const float* bias,
               int32_t* acc, float* y, bool accumulate) {
  const int64_t N = w.rows, K = w.cols;
  if (M == 0 || N == 0) return;
  const SerialScope small(M * N * K < 4 * kSerialWork);  // int8 does 4x the MACs per cycle
  if (!w.q_float.empty()) {
    // no VNNI: q(x) q(w)^T as an fp32 GEMM on the integer values, every product exact and every
    // sum exact while it stays below 2^24 (K <= 1040), then rounded into acc
    thread_local std::vector<float> xf, accf;
    xf.assign(qx, qx + M * K);
    accf.resize(static_cast<size_t>(M * N));
    float* sums = accf.data();  // (the workers below have thread_locals of their own)
    gemm(false, true, M, N, K, 1.f, xf.data(), K, w.q_float.data(), K, 0.f, sums, N);
    parallel_for(M, 8, [&](int64_t b, int64_t e) {
      for (int64_t i = b * N; i < e * N; ++i) acc[i] = static_cast<int32_t>(std::lrint(sums[i]));
    });
  } else {
    const int32_t zero = 0;  // no offsets: acc = q(x) q(w)^T exactly, in int32
    count_product(M, N, K);
    dnnl_status_t st = dnnl_gemm_s8s8s32('N', 'T', 'F', M, N, K, 1.f, qx, K, 0, w.q.data(), K, 0,
                                         0.f, acc, N, &zero);
    check(st == dnnl_success, "dnnl_gemm_s8s8s32 failed (status ", static_cast<int>(st),
          ") for M=", M, " N=", N, " K=", K);
  }
  const float* sw = w.scale.data();
  parallel_for(M, 8, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) {
      const int32_t* a = acc + m * N;
      float* out = y + m * N;
      const float s = sx[m];
      for (int64_t n = 0; n < N; ++n) {
        float v = s * sw[n] * static_cast<float>(a[n]);
        if (bias) v += bias[n];
        out[n] = accumulate ? out[n] + v : v;
      }
    }
  });
}

}  // namespace heed::kernels
