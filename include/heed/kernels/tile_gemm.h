// Small tile products inside heed's fused kernels (the attention tiles of kernels/attention.cc).
//
// A Transformer on sentences multiplies tiles of 10-40 rows by 32-64 columns, thousands of times a
// step (7 products per batch entry, head and attention layer). There oneDNN's sgemm spends more
// time entering than multiplying: 0.4-0.8 us for a 20 x 20 x 32 product on this machine (16-70
// GFLOP/s), 1 us on average inside a training step. These register-blocked loops do the same
// products at ~100-120 GFLOP/s; every product above kTileGemmMaxWork multiply-adds still goes to
// oneDNN (kernels/gemm.h), which is faster there.
// Leaves out: N that is not a multiple of 16 (callers pad, or use gemm()).
#pragma once

#include <cstdint>

namespace heed::kernels {

constexpr int64_t kTileLanes = 16;  // floats in one AVX-512 register; N is a multiple of this
// Products of at most this many multiply-adds (M N K) run here; the rest in oneDNN.
constexpr int64_t kTileGemmMaxWork = int64_t{1} << 16;

// n rounded up to a multiple of kTileLanes.
inline int64_t round_up_lanes(int64_t n) {
  return (n + kTileLanes - 1) / kTileLanes * kTileLanes;
}

// Whether an M x N x K product belongs here.
inline bool tile_gemm_fits(int64_t M, int64_t N, int64_t K) {
  return N % kTileLanes == 0 && M * N * K <= kTileGemmMaxWork;
}

// C[M, N] = alpha * A B + beta * C, beta 0 or 1 (0: C is only written), where
//   A(i, k) = A[i * a_row + k * a_col]   (a_col = 1: row-major A; a_row = 1: A stored transposed)
//   B is row-major [K, N] with row stride ldb, C row-major with row stride ldc,
// N a multiple of kTileLanes.
void tile_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t a_row,
               int64_t a_col, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// From this many rows of A, tile_gemm_abt multiplies by B^T written out (below it, dot products).
constexpr int64_t kAbtTransposeRows = 4;

// C[M, N] = alpha * A B^T with A row-major [M, K] (row stride lda) and B row-major [N, K] (row
// stride ldb), the score product of attention; C's columns N .. round_up_lanes(N) are written
// too, with zeros. For M >= kAbtTransposeRows B^T is first written to `scratch` (K *
// round_up_lanes(N) floats) by transpose_tile and multiplied by tile_gemm, or read from Bt [K,
// >= round_up_lanes(N)] (rows ldt) when the caller holds it already: the same floats, C's padding
// columns then the scores of whatever Bt holds there; fewer rows (a decoding step's one query)
// take one vectorised dot product per key.
void tile_gemm_abt(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                   const float* B, int64_t ldb, float* C, int64_t ldc, float* scratch,
                   const float* Bt = nullptr, int64_t ldt = 0);

// C[M, N] = alpha * A B^T + beta * C, beta 0 or 1, as one dot product of K per entry (A row-major
// [M, K], B row-major [N, K]): for few rows of A, any N.
void tile_gemm_dots(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                    const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// Bt[d, j] = B[j, d] for j < n, d < D (B row-major with row stride ldb; Bt with row stride ldt),
// and Bt[d, j] = 0 for n <= j < round_up_lanes(n).
void transpose_tile(const float* B, int64_t ldb, int64_t n, int64_t D, float* Bt, int64_t ldt);

}  // namespace heed::kernels
