// GEMM through oneDNN's dnnl_sgemm (row-major, OpenMP-threaded).
// Leaves out: any hand-written GEMM beyond the tiny products sent to tile_gemm.h.
#include "heed/kernels/gemm.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include "heed/kernels/flops.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/tile_gemm.h"
#include "heed/util/error.h"

namespace heed::kernels {

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // op(A) op(B) is a zero matrix; only beta * C remains
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.f ? 0.f : beta * C[i * ldc + j];
    return;
  }
  // Tiny products — an RNN attention's context and its gradients, one sentence at a time (1 x S x
  // D, S x 1 x D): thousands a training step, each a few thousand multiply-adds, where entering
  // oneDNN costs more than the product — run on the register-blocked tile loops.
  if ((beta == 0.f || beta == 1.f) && M * N * K <= kTileGemmMaxWork) {
    if (!trans_b && N % kTileLanes == 0) {  // A(i, k) = A[i a_row + k a_col]
      tile_gemm(M, N, K, alpha, A, trans_a ? 1 : lda, trans_a ? lda : 1, B, ldb, beta, C, ldc);
      return;
    }
    if (trans_b && !trans_a && M <= 2 && N <= 32) {  // (wider: oneDNN is faster)
      tile_gemm_dots(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      return;
    }
  }
  count_product(M, N, K);
  const SerialScope small(M * N * K < kSerialWork);  // oneDNN would split even a 1 x 256 x 256
  dnnl_status_t st = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda, B,
                                ldb, beta, C, ldc);
  check(st == dnnl_success, "dnnl_sgemm failed (status ", static_cast<int>(st), ") for M=", M,
        " N=", N, " K=", K);
}

void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K,
                  float alpha, const float* A, int64_t lda, int64_t stride_a, const float* B,
                  int64_t ldb, int64_t stride_b, float beta, float* C, int64_t ldc,
                  int64_t stride_c) {
  // Matrices too small to keep all threads busy inside one sgemm run one per thread instead.
  bool per_thread = batch > 1 && omp_get_max_threads() > 1 && !omp_in_parallel() &&
                    M * N * K < (int64_t{1} << 21);
  if (per_thread) {
    bool failed = false;
#pragma omp parallel for schedule(static) reduction(|| : failed)
    for (int64_t i = 0; i < batch; ++i) {
      try {
        gemm(trans_a, trans_b, M, N, K, alpha, A + i * stride_a, lda, B + i * stride_b, ldb, beta,
             C + i * stride_c, ldc);
      } catch (const Error&) {
        failed = true;
      }
    }
    check(!failed, "batched sgemm failed for M=", M, " N=", N, " K=", K);
    return;
  }
  for (int64_t i = 0; i < batch; ++i)
    gemm(trans_a, trans_b, M, N, K, alpha, A + i * stride_a, lda, B + i * stride_b, ldb, beta,
         C + i * stride_c, ldc);
}

}  // namespace heed::kernels
