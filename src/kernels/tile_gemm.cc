// Register-blocked products of small tiles: R rows of C by NV registers of 16 columns are
// accumulated over k in registers (R * NV <= 16 accumulators), one broadcast of A(i, k) per row
// and one load of B's row k per register; C is read and written once.
// Leaves out: packing (the tiles are small enough to stay in L1/L2) and threading (the caller
// runs one tile per thread).
#include "heed/kernels/tile_gemm.h"

#include <algorithm>

#include "heed/kernels/flops.h"
#include "heed/kernels/vmath.h"

namespace heed::kernels {
namespace {

constexpr int kRows = 4;     // rows of C per block
constexpr int kMaxRegs = 4;  // registers of 16 columns per block: 64 columns

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

// R rows of C, all N columns: blocks of 64 columns, then one of 16, 32 or 48.
template <int R>
void rows(int64_t N, int64_t K, float alpha, const float* A, int64_t a_row, int64_t a_col,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  constexpr int64_t kWide = kMaxRegs * kTileLanes;
  int64_t j = 0;
  for (; j + kWide <= N; j += kWide)
    block<R, kMaxRegs>(K, alpha, A, a_row, a_col, B + j, ldb, beta, C + j, ldc);
  switch ((N - j) / kTileLanes) {
    case 3:
      block<R, 3>(K, alpha, A, a_row, a_col, B + j, ldb, beta, C + j, ldc);
      break;
    case 2:
      block<R, 2>(K, alpha, A, a_row, a_col, B + j, ldb, beta, C + j, ldc);
      break;
    case 1:
      block<R, 1>(K, alpha, A, a_row, a_col, B + j, ldb, beta, C + j, ldc);
      break;
    default:
      break;
  }
}

}  // namespace

void tile_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t a_row,
               int64_t a_col, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  count_product(M, N, K);
  int64_t i = 0;
  for (; i + kRows <= M; i += kRows)
    rows<kRows>(N, K, alpha, A + i * a_row, a_row, a_col, B, ldb, beta, C + i * ldc, ldc);
  const float* Ai = A + i * a_row;
  float* Ci = C + i * ldc;
  switch (M - i) {
    case 3:
      rows<3>(N, K, alpha, Ai, a_row, a_col, B, ldb, beta, Ci, ldc);
      break;
    case 2:
      rows<2>(N, K, alpha, Ai, a_row, a_col, B, ldb, beta, Ci, ldc);
      break;
    case 1:
      rows<1>(N, K, alpha, Ai, a_row, a_col, B, ldb, beta, Ci, ldc);
      break;
    default:
      break;
  }
}

void tile_gemm_abt(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                   const float* B, int64_t ldb, float* C, int64_t ldc, float* scratch) {
  const int64_t padded = round_up_lanes(N);
  if (M >= kRows) {
    transpose_tile(B, ldb, N, K, scratch, padded);
    tile_gemm(M, padded, K, alpha, A, lda, 1, scratch, padded, 0.f, C, ldc);
    return;
  }
  // Few rows (a decoding step's one query): one dot product per key
  tile_gemm_dots(M, N, K, alpha, A, lda, B, ldb, 0.f, C, ldc);
  for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc + N, C + i * ldc + padded, 0.f);
}

void tile_gemm_dots(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                    const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  count_product(M, N, K);
  // the dot products' chains are independent, so they overlap
  for (int64_t i = 0; i < M; ++i) {
    const float* a = A + i * lda;
    float* c = C + i * ldc;
    if (beta == 0.f) {
      for (int64_t j = 0; j < N; ++j) c[j] = alpha * vmath::dot(a, B + j * ldb, K);
    } else {
      for (int64_t j = 0; j < N; ++j) c[j] += alpha * vmath::dot(a, B + j * ldb, K);
    }
  }
}

void transpose_tile(const float* B, int64_t ldb, int64_t n, int64_t D, float* Bt, int64_t ldt) {
  const int64_t padded = round_up_lanes(n);
  for (int64_t d = 0; d < D; ++d) {
    float* row = Bt + d * ldt;
    const float* col = B + d;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) row[j] = col[j * ldb];  // a gather per 16 keys
    std::fill(row + n, row + padded, 0.f);
  }
}

}  // namespace heed::kernels
