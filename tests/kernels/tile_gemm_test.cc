// The fused attention's small tile products against the textbook product in double precision:
// every row remainder of the 4-row blocks (8-row blocks at 1-2 registers of columns: each row's
// floats as if alone), 1-5 registers of columns, A row-major and stored
// transposed, strided operands, beta 0 and 1; the score product A B^T (dot products for one to
// three rows, vmath::dot's floats four keys at a time; a transposed B from four) and the
// transposed key tile, with their zero padding.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "heed/kernels/random.h"
#include "heed/kernels/tile_gemm.h"
#include "heed/kernels/vmath.h"

namespace heed {
namespace {

TEST(TileGemm, EqualsTextbookProduct) {
  Rng rng(7);
  for (bool a_transposed : {false, true})
    for (float beta : {0.f, 1.f})
      for (int64_t M : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 21})
        for (int64_t N : {16, 32, 48, 64, 80, 128})
          for (int64_t K : {1, 7, 33}) {
            // A stored [M, K] (row stride K + 3) or transposed [K, M] (row stride M + 2)
            const int64_t a_row = a_transposed ? 1 : K + 3, a_col = a_transposed ? M + 2 : 1;
            const int64_t ldb = N + 5, ldc = N + 16;
            std::vector<float> A((a_transposed ? K * a_col : M * a_row) + 1), B(K * ldb),
                C(M * ldc);
            for (auto& v : A) v = rng.uniform(-1, 1);
            for (auto& v : B) v = rng.uniform(-1, 1);
            for (auto& v : C) v = rng.uniform(-1, 1);
            const std::vector<float> C0 = C;
            const float alpha = 0.75f;
            kernels::tile_gemm(M, N, K, alpha, A.data(), a_row, a_col, B.data(), ldb, beta,
                               C.data(), ldc);
            double worst = 0;
            for (int64_t i = 0; i < M; ++i) {
              for (int64_t j = 0; j < N; ++j) {
                double want = beta * double{C0[i * ldc + j]};
                for (int64_t k = 0; k < K; ++k)
                  want += alpha * double{A[i * a_row + k * a_col]} * B[k * ldb + j];
                worst = std::max(worst, std::abs(want - C[i * ldc + j]));
              }
              for (int64_t j = N; j < ldc; ++j)  // past N: untouched
                ASSERT_EQ(C[i * ldc + j], C0[i * ldc + j]) << M << "x" << N << "x" << K;
            }
            EXPECT_LT(worst, 1e-5 * K) << M << "x" << N << "x" << K << " transposed A "
                                       << a_transposed << " beta " << beta;
          }
}

// A row's floats do not depend on the rows multiplied with it (the block it lands in, 1-8 rows):
// every row of an M-row product equals the same row multiplied alone, bit for bit.
TEST(TileGemm, ARowsFloatsDoNotDependOnItsBlock) {
  Rng rng(9);
  for (int64_t N : {16, 32, 48, 64})
    for (int64_t M : {5, 8, 13, 21}) {
      const int64_t K = 19, ldb = N + 1;
      std::vector<float> A(M * K), B(K * ldb), C(M * N, 0.f), row(N);
      for (auto& v : A) v = rng.uniform(-1, 1);
      for (auto& v : B) v = rng.uniform(-1, 1);
      kernels::tile_gemm(M, N, K, 0.5f, A.data(), K, 1, B.data(), ldb, 0.f, C.data(), N);
      for (int64_t i = 0; i < M; ++i) {
        kernels::tile_gemm(1, N, K, 0.5f, A.data() + i * K, K, 1, B.data(), ldb, 0.f, row.data(),
                           N);
        for (int64_t j = 0; j < N; ++j)
          ASSERT_EQ(std::bit_cast<uint32_t>(C[i * N + j]), std::bit_cast<uint32_t>(row[j]))
              << M << "x" << N << " row " << i << " column " << j;
      }
    }
}

TEST(TileGemm, TransposesAKeyTileWithZeroPadding) {
  Rng rng(8);
  for (auto [n, D] : {std::pair<int64_t, int64_t>{1, 24},
                      {15, 24},
                      {16, 24},
                      {17, 24},
                      {40, 24},
                      {33, 32},
                      {48, 32},
                      {7, 5},
                      {64, 64}}) {  // blocks of 16 x 16, whole and cut
    const int64_t ldb = 3 * D, ldt = 64;
    std::vector<float> B(n * ldb), Bt(D * ldt, -7.f);
    for (auto& v : B) v = rng.uniform(-1, 1);
    kernels::transpose_tile(B.data(), ldb, n, D, Bt.data(), ldt);
    for (int64_t d = 0; d < D; ++d) {
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(Bt[d * ldt + j], B[j * ldb + d]);
      for (int64_t j = n; j < kernels::round_up_lanes(n); ++j) ASSERT_EQ(Bt[d * ldt + j], 0.f);
      for (int64_t j = kernels::round_up_lanes(n); j < ldt; ++j) ASSERT_EQ(Bt[d * ldt + j], -7.f);
    }
  }
}

TEST(TileGemm, ScoreProductEqualsTextbookAndPadsWithZeros) {
  Rng rng(9);
  for (int64_t M : {1, 2, 3, 4, 5, 9})  // below 4 rows: dot products; from 4: transposed B
    for (int64_t N : {1, 15, 16, 17, 40})
      for (int64_t K : {7, 32}) {
        const int64_t lda = K + 2, ldb = 3 * K, ldc = 64;
        std::vector<float> A(M * lda), B(N * ldb), C(M * ldc, -7.f),
            scratch(K * kernels::round_up_lanes(N), -3.f);
        for (auto& v : A) v = rng.uniform(-1, 1);
        for (auto& v : B) v = rng.uniform(-1, 1);
        kernels::tile_gemm_abt(M, N, K, 0.5f, A.data(), lda, B.data(), ldb, C.data(), ldc,
                               scratch.data());
        for (int64_t i = 0; i < M; ++i) {
          for (int64_t j = 0; j < N; ++j) {
            double want = 0;
            for (int64_t k = 0; k < K; ++k) want += 0.5 * A[i * lda + k] * B[j * ldb + k];
            EXPECT_NEAR(C[i * ldc + j], want, 1e-5 * K) << M << "x" << N << "x" << K;
            // dot products, four keys at a time: dot()'s own floats
            if (M < kernels::kAbtTransposeRows) {
              ASSERT_EQ(std::bit_cast<uint32_t>(C[i * ldc + j]),
                        std::bit_cast<uint32_t>(
                            0.5f * vmath::dot(A.data() + i * lda, B.data() + j * ldb, K)));
            }
          }
          for (int64_t j = N; j < kernels::round_up_lanes(N); ++j) ASSERT_EQ(C[i * ldc + j], 0.f);
          for (int64_t j = kernels::round_up_lanes(N); j < ldc; ++j)
            ASSERT_EQ(C[i * ldc + j], -7.f);
        }
      }
}

// tile_gemm_dots with beta 1 adds each product to C, and with beta 0 writes it, any N.
TEST(TileGemm, DotsAddOrWriteEachEntry) {
  Rng rng(10);
  for (int64_t N : {1, 4, 6, 13})
    for (int64_t K : {5, 16, 32}) {
      const int64_t M = 2, lda = K, ldb = K + 16, ldc = N + 3;
      std::vector<float> A(M * lda), B(N * ldb), C(M * ldc);
      for (auto& v : A) v = rng.uniform(-1, 1);
      for (auto& v : B) v = rng.uniform(-1, 1);
      for (auto& v : C) v = rng.uniform(-1, 1);
      for (float beta : {0.f, 1.f}) {
        std::vector<float> got = C;
        kernels::tile_gemm_dots(M, N, K, 2.f, A.data(), lda, B.data(), ldb, beta, got.data(), ldc);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < ldc; ++j) {
            const float* a = A.data() + i * lda;
            const float want = j >= N ? C[i * ldc + j]
                               : beta == 0.f
                                   ? 2.f * vmath::dot(a, B.data() + j * ldb, K)
                                   : C[i * ldc + j] + 2.f * vmath::dot(a, B.data() + j * ldb, K);
            // (beta 1: the sum may be fused into one rounding, or not)
            if (beta == 0.f || j >= N)
              ASSERT_EQ(std::bit_cast<uint32_t>(got[i * ldc + j]), std::bit_cast<uint32_t>(want))
                  << "N " << N << " K " << K << " (" << i << ", " << j << ")";
            else
              ASSERT_NEAR(got[i * ldc + j], want, 1e-6f) << "N " << N << " K " << K;
          }
      }
    }
}

TEST(TileGemm, TakesOnlySmallProductsWithWholeRegisters) {
  EXPECT_TRUE(kernels::tile_gemm_fits(20, 32, 20));
  EXPECT_FALSE(kernels::tile_gemm_fits(20, 33, 20));   // N not a multiple of 16
  EXPECT_FALSE(kernels::tile_gemm_fits(64, 128, 64));  // a full long-sequence tile: oneDNN
}

}  // namespace
}  // namespace heed
