// int8 inference GEMM (see the header).
// Leaves out: saturation handling beyond [-127, 127] (symmetric scales never reach -128).
#include "heed/kernels/quantize.h"

#include <oneapi/dnnl/dnnl.h>

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#define HEED_INT8_PACKED 1
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "heed/kernels/flops.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed::kernels {

namespace {

// One row: s = max|x| / 127, q = round(x / s), half away from zero (|y| <= 127.5 - ulp). Its own
// function, the sizes passed by value: inside parallel_for's lambda the int8 stores may alias
// the captured K and GCC leaves the loop scalar ("number of iterations cannot be computed").
float quantize_row(const float* r, int64_t K, int8_t* q) {
  const float amax = vmath::max_abs(r, K);
  const float s = amax > 0.f ? amax / 127.f : 1.f, inv = 1.f / s;
  for (int64_t k = 0; k < K; ++k) {
    const float y = r[k] * inv;
    q[k] = static_cast<int8_t>(static_cast<int32_t>(y + std::copysign(0.5f, y)));
  }
  return s;
}

}  // namespace

void quantize_rows(const float* x, int64_t M, int64_t K, int8_t* q, float* scale) {
  parallel_for(M, grain_for(kSerialWork, K), [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) scale[m] = quantize_row(x + m * K, K, q + m * K);
  });
}

bool keep_int8_off_amx() {
  static const bool capped = [] {
    if (int8_packed_kernel()) return false;  // oneDNN's int8 GEMM is not called
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

bool int8_packed_kernel() {
#ifdef HEED_INT8_PACKED
  return true;
#else
  return false;
#endif
}

namespace {

constexpr int64_t kGroupRows = 64;  // rows of one group of `packed`: four zmm of int32 sums

// packed[(g K4 + k4) 256 + 4 r + j] = q[(64 g + r) K + 4 k4 + j], zero beyond N and K
void pack_for_vnni(Int8Matrix& m) {
  const int64_t N = m.rows, K = m.cols, K4 = (K + 3) / 4, G = (N + kGroupRows - 1) / kGroupRows;
  m.packed.assign(static_cast<size_t>(G * K4 * kGroupRows * 4), 0);
  m.row_sums.assign(static_cast<size_t>(N), 0);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t g = n / kGroupRows, r = n % kGroupRows;
    int32_t sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      const int8_t v = m.q[n * K + k];
      m.packed[((g * K4 + k / 4) * kGroupRows + r) * 4 + k % 4] = v;
      sum += v;
    }
    m.row_sums[n] = sum;
  }
}

#ifdef HEED_INT8_PACKED
// One group of 64 rows of W against R rows of x (u, four bytes a word, K4 words a row):
// sums[r][j] holds the 16 int32 dot products of rows 16 j .. 16 j + 15. Each load of W serves
// all R rows; with one row, two chains of accumulators (even and odd k4) hide vpdpbusd's latency.
// The four-row form keeps two vpdpbusd a cycle busy for large M (on a par with oneDNN's
// AVX512-VNNI GEMM at 64-320 rows).
constexpr int64_t kPrefetchBytes = 8 * kGroupRows * 4;  // W eight k4 steps ahead, into L1

template <int R>
void group_dots(const int8_t* wg, const uint32_t* u, int64_t K4, __m512i (&sums)[R][4]) {
  constexpr int C = R == 1 ? 2 : 1;
  __m512i a[C][R][4] = {};  // zeros
  const auto step = [&](int c, int64_t k4) {
    const int8_t* wk = wg + k4 * kGroupRows * 4;
    __m512i wv[4];
    for (int j = 0; j < 4; ++j) {
      _mm_prefetch(reinterpret_cast<const char*>(wk + kPrefetchBytes + 64 * j), _MM_HINT_T0);
      wv[j] = _mm512_loadu_si512(wk + 64 * j);
    }
    for (int r = 0; r < R; ++r) {
      const __m512i x4 = _mm512_set1_epi32(static_cast<int>(u[r * K4 + k4]));
      for (int j = 0; j < 4; ++j) a[c][r][j] = _mm512_dpbusd_epi32(a[c][r][j], x4, wv[j]);
    }
  };
  int64_t k4 = 0;
  for (; k4 + C <= K4; k4 += C)
    for (int c = 0; c < C; ++c) step(c, k4 + c);
  for (; k4 < K4; ++k4) step(0, k4);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 4; ++j) {
      sums[r][j] = a[0][r][j];
      for (int c = 1; c < C; ++c) sums[r][j] = _mm512_add_epi32(sums[r][j], a[c][r][j]);
    }
}

// heed's int8 product (see int8_packed_kernel). vpdpbusd multiplies unsigned bytes by signed ones,
// four to a 32-bit lane, summing in int32 without saturation, so x goes in shifted, u = q(x) + 128
// in [1, 255], and the shift comes back out per row of W:
//   sum_k q(x)_k q(w)_nk = sum_k u_k q(w)_nk - 128 sum_k q(w)_nk      (exact: |sum| < 2^31)
// then y[m, n] = s_x[m] s_w[n] acc[m, n] (+ b[n]) (+ y[m, n]). One group of 64 rows of W
// (K bytes each, 16 KB at K = 256) stays in L1 while the rows of x pass over it, four at a
// time (16 accumulators), then two, then one; the int32 sums never leave the registers (storing
// them as well cost 25-45 % at 32-160 rows of K = 128).
void gemm_int8_packed(int64_t M, const int8_t* qx, const float* sx, const Int8Matrix& w,
                      const float* bias, float* y, bool accumulate) {
  const int64_t N = w.rows, K = w.cols, K4 = (K + 3) / 4, G = (N + kGroupRows - 1) / kGroupRows;
  thread_local std::vector<uint32_t> shifted;  // u [M, K4]: four bytes of u a word, 128 beyond K
  shifted.assign(static_cast<size_t>(M * K4), 0x80808080u);
  auto* u8 = reinterpret_cast<uint8_t*>(shifted.data());
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // q + 128 = q ^ 0x80
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; k += 64) {
      const __mmask64 in = K - k >= 64 ? ~__mmask64{0} : (__mmask64{1} << (K - k)) - 1;
      _mm512_mask_storeu_epi8(u8 + m * K4 * 4 + k, in,
                              _mm512_xor_si512(_mm512_maskz_loadu_epi8(in, qx + m * K + k), flip));
    }
  const uint32_t* u = shifted.data();
  const int8_t* packed = w.packed.data();
  const int32_t* row_sums = w.row_sums.data();
  const float* sw = w.scale.data();
  // row m of the output for rows 64 g .. 64 g + 63, from its 64 integer sums
  const auto finish = [&](int64_t g, int64_t m, const __m512i(&dots)[4]) {
    const __m512 s = _mm512_set1_ps(sx[m]);
    for (int j = 0; j < 4; ++j) {
      const int64_t n0 = g * kGroupRows + 16 * j, left = N - n0;
      if (left <= 0) break;
      const __mmask16 k = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
      // (the maskz forms: GCC 12 warns that the plain ones' undefined register may be used)
      const __m512i sums = _mm512_sub_epi32(
          dots[j], _mm512_maskz_slli_epi32(k, _mm512_maskz_loadu_epi32(k, row_sums + n0), 7));
      // fma(s_x s_w, acc, b), rounded as gemm_int8's other paths round it, so that a row's
      // output does not depend on how many rows came with it (the batch)
      const __m512 b = bias ? _mm512_maskz_loadu_ps(k, bias + n0) : _mm512_setzero_ps();
      __m512 v = _mm512_fmadd_ps(_mm512_mul_ps(s, _mm512_maskz_loadu_ps(k, sw + n0)),
                                 _mm512_maskz_cvtepi32_ps(k, sums), b);
      float* out = y + m * N + n0;
      if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, out));
      _mm512_mask_storeu_ps(out, k, v);
    }
  };
  parallel_for(G, grain_for(4 * kSerialWork, M * kGroupRows * K), [&](int64_t gb, int64_t ge) {
    for (int64_t g = gb; g < ge; ++g) {
      const int8_t* wg = packed + g * K4 * kGroupRows * 4;
      int64_t m = 0;
      for (; m + 4 <= M; m += 4) {
        __m512i dots[4][4];
        group_dots<4>(wg, u + m * K4, K4, dots);
        for (int r = 0; r < 4; ++r) finish(g, m + r, dots[r]);
      }
      for (; m + 2 <= M; m += 2) {
        __m512i dots[2][4];
        group_dots<2>(wg, u + m * K4, K4, dots);
        finish(g, m, dots[0]);
        finish(g, m + 1, dots[1]);
      }
      if (m < M) {
        __m512i dots[1][4];
        group_dots<1>(wg, u + m * K4, K4, dots);
        finish(g, m, dots[0]);
      }
    }
  });
}
#endif

}  // namespace

Int8Matrix quantize_matrix(const float* w, int64_t N, int64_t K) {
  Int8Matrix m{N,
               K,
               std::vector<int8_t>(static_cast<size_t>(N * K)),
               std::vector<float>(static_cast<size_t>(N)),
               {},
               {},
               {}};
  quantize_rows(w, N, K, m.q.data(), m.scale.data());
  if (!int8_exact()) m.q_float.assign(m.q.begin(), m.q.end());
  if (int8_packed_kernel()) pack_for_vnni(m);
  return m;
}

void gemm_int8(int64_t M, const int8_t* qx, const float* sx, const Int8Matrix& w, const float* bias,
               int32_t* acc, float* y, bool accumulate) {
  const int64_t N = w.rows, K = w.cols;
  if (M == 0 || N == 0) return;
#ifdef HEED_INT8_PACKED
  if (!w.packed.empty()) {
    count_product(M, N, K);
    gemm_int8_packed(M, qx, sx, w, bias, y, accumulate);  // (no int32 sums in memory)
    return;
  }
#endif
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
      for (int64_t n = 0; n < N; ++n) {  // heed's kernel's rounding exactly (see there)
        const float v = std::fma(s * sw[n], static_cast<float>(a[n]), bias ? bias[n] : 0.f);
        out[n] = accumulate ? out[n] + v : v;
      }
    }
  });
}

}  // namespace heed::kernels
