// Register-blocked products of small tiles: R rows of C by NV registers of 16 columns are
// accumulated over k in registers (R * NV <= 16 accumulators), one broadcast of A(i, k) per row
// and one load of B's row k per register; C is read and written once. Narrow products (N <= 32:
// a head's values, d = 32, or a sentence's keys) take 8 rows a block, so B is read once per 8
// rows instead of per 4: beam search's 5 queries a sentence read each key and value row once, not
// twice (batched, those rows come from L3), and a training tile has twice the multiply-adds per
// load.
// Leaves out: packing (the tiles are small enough to stay in L1/L2) and threading (the caller
// runs one tile per thread).
#include "heed/kernels/tile_gemm.h"

#include <algorithm>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "heed/kernels/flops.h"
#include "heed/kernels/vmath.h"
#include "with_count.h"

namespace heed::kernels {
namespace {

constexpr int kRows = 4;           // rows of C per block
constexpr int kNarrowRows = 8;     // rows per block when N <= kNarrowColumns
constexpr int kMaxRegs = 4;        // registers of 16 columns per block: 64 columns
constexpr int kAccumulators = 16;  // registers a block may hold sums in (R * NV)
constexpr int64_t kNarrowColumns = 2 * kTileLanes;

template <int R, int NV>
void block(int64_t K, float alpha, const float* A, int64_t a_row, int64_t a_col, const float* B,
           int64_t ldb, float beta, float* C, int64_t ldc) {
  constexpr int W = NV * static_cast<int>(kTileLanes);
  float acc[R][W] = {};  // [R, W] C block, kept in registers
  for (int64_t k = 0; k < K; ++k) {
    const float* b = B + k * ldb;
    for (int r = 0; r < R; ++r) {
      const float a = A[r * a_row + k * a_col];
#pragma omp simd
      for (int j = 0; j < W; ++j) acc[r][j] += a * b[j];
    }
  }
  for (int r = 0; r < R; ++r) {
    float* c = C + r * ldc;
    // NOLINTNEXTLINE(bugprone-branch-clone): = and +=, told apart only through the pragmas
    if (beta == 0.f) {
#pragma omp simd
      for (int j = 0; j < W; ++j) c[j] = alpha * acc[r][j];
    } else {
#pragma omp simd
      for (int j = 0; j < W; ++j) c[j] += alpha * acc[r][j];
    }
  }
}

// R rows of C, all N columns: blocks of NV registers (as many as R rows leave accumulators for:
// 4, 64 columns, up to 4 rows; 2 for 5-8 rows), then one of the registers left.
template <int R>
void rows(int64_t N, int64_t K, float alpha, const float* A, int64_t a_row, int64_t a_col,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  constexpr int NV = std::min(kMaxRegs, kAccumulators / R);
  constexpr int64_t kWide = NV * kTileLanes;
  int64_t j = 0;
  for (; j + kWide <= N; j += kWide)
    block<R, NV>(K, alpha, A, a_row, a_col, B + j, ldb, beta, C + j, ldc);
  with_count<NV - 1>((N - j) / kTileLanes, [&](auto v) {
    constexpr int V = decltype(v)::value;
    block<R, V>(K, alpha, A, a_row, a_col, B + j, ldb, beta, C + j, ldc);
  });
}

// All M rows in blocks of Block rows, then one of the rows left.
template <int Block>
void all_rows(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t a_row,
              int64_t a_col, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  int64_t i = 0;
  for (; i + Block <= M; i += Block)
    rows<Block>(N, K, alpha, A + i * a_row, a_row, a_col, B, ldb, beta, C + i * ldc, ldc);
  with_count<Block - 1>(M - i, [&](auto r) {
    constexpr int R = decltype(r)::value;
    rows<R>(N, K, alpha, A + i * a_row, a_row, a_col, B, ldb, beta, C + i * ldc, ldc);
  });
}

}  // namespace

void tile_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t a_row,
               int64_t a_col, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  count_product(M, N, K);
  if (N <= kNarrowColumns)
    all_rows<kNarrowRows>(M, N, K, alpha, A, a_row, a_col, B, ldb, beta, C, ldc);
  else
    all_rows<kRows>(M, N, K, alpha, A, a_row, a_col, B, ldb, beta, C, ldc);
}

void tile_gemm_abt(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                   const float* B, int64_t ldb, float* C, int64_t ldc, float* scratch,
                   const float* Bt, int64_t ldt) {
  const int64_t padded = round_up_lanes(N);
  if (M >= kAbtTransposeRows) {
    if (!Bt) {
      transpose_tile(B, ldb, N, K, scratch, padded);
      Bt = scratch;
      ldt = padded;
    }
    tile_gemm(M, padded, K, alpha, A, lda, 1, Bt, ldt, 0.f, C, ldc);
    return;
  }
  // Few rows (a decoding step's one query): one dot product per key
  tile_gemm_dots(M, N, K, alpha, A, lda, B, ldb, 0.f, C, ldc);
  for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc + N, C + i * ldc + padded, 0.f);
}

void tile_gemm_dots(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                    const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  count_product(M, N, K);
  // the dot products' chains are independent, so they overlap; four keys' sums share one tree
  // (dot4: the same floats) when K is whole vectors
  for (int64_t i = 0; i < M; ++i) {
    const float* a = A + i * lda;
    float* c = C + i * ldc;
    auto put = [&](int64_t j, float dot) {
      if (beta == 0.f)
        c[j] = alpha * dot;
      else
        c[j] += alpha * dot;
    };
    int64_t j = 0;
    if (K % kTileLanes == 0)
      for (; j + 4 <= N; j += 4) {
        float d[4];
        vmath::dot4(a, 0, B + j * ldb, ldb, K, d);
        for (int64_t t = 0; t < 4; ++t) put(j + t, d[t]);
      }
    for (; j < N; ++j) put(j, vmath::dot(a, B + j * ldb, K));
  }
}

#if defined(__AVX512F__)
namespace {
// r[i][j] -> r[j][i] for a 16 x 16 block of floats in registers, in four rounds of shuffles:
// pairs of rows interleaved (unpack), then fours (shuffle_ps), which leaves u[4 i + c]'s 128-bit
// lane L holding column 4 L + c of rows 4 i .. 4 i + 3; then each c's four registers swap lanes
// as a 4 x 4 transpose of lanes (two rounds of shuffle_f32x4).
void transpose16(__m512 (&r)[16]) {
  constexpr __mmask16 kAll = 0xffff;  // (the maskz forms: GCC 12 warns of the plain ones'
                                      // undefined register)
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_ps(kAll, r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_ps(kAll, r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_maskz_shuffle_ps(kAll, t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_maskz_shuffle_ps(kAll, t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_maskz_shuffle_ps(kAll, t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_maskz_shuffle_ps(kAll, t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {  // rows 4 L + c of the result
    const __m512 v0 = _mm512_maskz_shuffle_f32x4(kAll, r[c], r[4 + c], 0x44);
    const __m512 v1 = _mm512_maskz_shuffle_f32x4(kAll, r[c], r[4 + c], 0xEE);
    const __m512 v2 = _mm512_maskz_shuffle_f32x4(kAll, r[8 + c], r[12 + c], 0x44);
    const __m512 v3 = _mm512_maskz_shuffle_f32x4(kAll, r[8 + c], r[12 + c], 0xEE);
    t[c] = _mm512_maskz_shuffle_f32x4(kAll, v0, v2, 0x88);
    t[4 + c] = _mm512_maskz_shuffle_f32x4(kAll, v0, v2, 0xDD);
    t[8 + c] = _mm512_maskz_shuffle_f32x4(kAll, v1, v3, 0x88);
    t[12 + c] = _mm512_maskz_shuffle_f32x4(kAll, v1, v3, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}
}  // namespace
#endif

void transpose_tile(const float* B, int64_t ldb, int64_t n, int64_t D, float* Bt, int64_t ldt) {
#if defined(__AVX512F__)
  // blocks of 16 keys x 16 dimensions: 16 row loads, 64 shuffles and 16 stores, where the loop
  // below gathers (a gather of 16 floats is 16 loads); keys past n load as zeros, the padding
  static_assert(kTileLanes == 16);
  for (int64_t j0 = 0; j0 < n; j0 += 16) {
    const int64_t keys = std::min<int64_t>(16, n - j0);
    for (int64_t d0 = 0; d0 < D; d0 += 16) {
      const int64_t dims = std::min<int64_t>(16, D - d0);
      const __mmask16 in = dims == 16 ? __mmask16(0xffff) : __mmask16((1u << dims) - 1);
      __m512 r[16];
      for (int64_t i = 0; i < 16; ++i)
        r[i] = i < keys ? _mm512_maskz_loadu_ps(in, B + (j0 + i) * ldb + d0) : _mm512_setzero_ps();
      transpose16(r);
      for (int64_t c = 0; c < dims; ++c) _mm512_storeu_ps(Bt + (d0 + c) * ldt + j0, r[c]);
    }
  }
#else
  const int64_t padded = round_up_lanes(n);
  for (int64_t d = 0; d < D; ++d) {
    float* row = Bt + d * ldt;
    const float* col = B + d;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) row[j] = col[j * ldb];  // a gather per 16 keys
    std::fill(row + n, row + padded, 0.f);
  }
#endif
}

}  // namespace heed::kernels
