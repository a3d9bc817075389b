// GEMM through oneDNN's dnnl_sgemm (row-major, OpenMP-threaded).
// Leaves out: any hand-written GEMM beyond the tiny products sent to tile_gemm.h.
#include "heed/kernels/gemm.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <vector>

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
  // Skinny products, K <= kSkinnyK (location-aware attention's U f over 10 filters, 3072 x 320 x
  // 10 a step of a batch of 16): oneDNN's sgemm ran that one at ~2 GFLOP/s (9 ms, measured on
  // Zen 4); the tile loops, op(B) first copied row-major ([K, N], at most 16 rows), do K
  // register-blocked rank-1 updates per row block instead.
  if ((beta == 0.f || beta == 1.f) && K <= kSkinnyK && N % kTileLanes == 0) {
    count_product(M, N, K);
    thread_local std::vector<float> bt;
    const float* b = B;
    int64_t b_ld = ldb;
    if (trans_b) {  // op(B)[k, j] = B[j ldb + k]
      bt.resize(static_cast<size_t>(K * N));
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k) bt[k * N + j] = B[j * ldb + k];
      b = bt.data();
      b_ld = N;
    }
    const int64_t a_row = trans_a ? 1 : lda, a_col = trans_a ? lda : 1;
    parallel_for(M, grain_for(kSerialWork, N * K), [&](int64_t i0, int64_t i1) {
      tile_gemm(i1 - i0, N, K, alpha, A + i0 * a_row, a_row, a_col, b, b_ld, beta, C + i0 * ldc,
                ldc);
    });
    return;
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
