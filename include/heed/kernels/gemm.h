// GEMM: the only door to oneDNN's sgemm in heed. Every matrix product of every model comes here,
// except the small tiles inside the fused attention kernel (tile_gemm.h, where oneDNN's call
// overhead outweighs the product). Tiny products that come here (at most kTileGemmMaxWork
// multiply-adds, beta 0 or 1, and N a multiple of 16, or B transposed, N <= 32 and at most 2
// rows of A) go on to tile_gemm.h's loops for the same reason.
// Leaves out: GEMV special cases (oneDNN picks its own kernels by shape); the int8 and bf16
// products have their own doors beside it (quantize.h, bf16.h).
#pragma once

#include <cstdint>

namespace heed::kernels {

// Row-major C[M,N] = alpha * op(A) op(B) + beta * C, op(X) = X or X^T.
// lda/ldb/ldc are the row strides of A, B and C as stored.
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// `batch` independent GEMMs, the i-th on A + i*stride_a, B + i*stride_b, C + i*stride_c
// (a stride of 0 repeats that operand). Small matrices run one per thread.
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K,
                  float alpha, const float* A, int64_t lda, int64_t stride_a, const float* B,
                  int64_t ldb, int64_t stride_b, float beta, float* C, int64_t ldc,
                  int64_t stride_c);

}  // namespace heed::kernels
