// bf16 mixed precision: rounding to bf16 (ties to even, NaN, infinities), and oneDNN's bf16
// matmul against the textbook product of the rounded operands (exact products, fp32 sums), for
// every transpose, strided operands, M split into a multiple of kBf16Rows and a tail, beta, bias.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "heed/kernels/bf16.h"
#include "heed/kernels/random.h"

namespace heed {
namespace {

using kernels::bf16;

TEST(Bf16, RoundsToNearestTiesToEven) {
  const float ulp = std::ldexp(1.f, -7);  // bf16's spacing in [1, 2)
  EXPECT_EQ(kernels::to_bf16(1.f), 0x3f80);
  EXPECT_EQ(kernels::to_bf16(-2.f), 0xc000);
  EXPECT_EQ(kernels::to_bf16(1.f + ulp), 0x3f81);                 // representable
  EXPECT_EQ(kernels::to_bf16(1.f + ulp / 2), 0x3f80);             // tie: to even (down)
  EXPECT_EQ(kernels::to_bf16(1.f + 3 * ulp / 2), 0x3f82);         // tie: to even (up)
  EXPECT_EQ(kernels::to_bf16(1.f + ulp / 2 + ulp / 64), 0x3f81);  // above the tie: up
  EXPECT_EQ(kernels::to_bf16(1.f + ulp / 2 - ulp / 64), 0x3f80);  // below: down
  EXPECT_EQ(kernels::to_bf16(-0.f), 0x8000);
  EXPECT_EQ(kernels::to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(kernels::to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to inf
  const bf16 nan = kernels::to_bf16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(kernels::from_bf16(nan)));
  // a NaN whose payload lies only in the dropped bits must not turn into an infinity
  EXPECT_TRUE(std::isnan(kernels::from_bf16(kernels::to_bf16(std::bit_cast<float>(0x7f800001u)))));
  for (float x : {0.1f, -3.14159f, 1e-30f, 6.5e4f})  // within half a bf16 ulp
    EXPECT_LE(std::abs(kernels::from_bf16(kernels::to_bf16(x)) - x), std::abs(x) * 0x1p-8f) << x;
}

TEST(Bf16, StridedConversionEqualsElementwise) {
  Rng rng(3);
  const int64_t rows = 300, cols = 37, ld = 41;  // 300 rows: the threaded path
  std::vector<float> x(rows * ld);
  for (auto& v : x) v = rng.uniform(-5, 5);
  std::vector<bf16> y(rows * cols);
  kernels::to_bf16(x.data(), rows, cols, ld, y.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(y[r * cols + c], kernels::to_bf16(x[r * ld + c])) << r << "," << c;
}

// C = op(A) op(B) (+ bias) + beta C on the bf16 values, in double.
void naive(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const bf16* A, int64_t lda,
           const bf16* B, int64_t ldb, float beta, float* C, int64_t ldc, const float* bias) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = bias ? bias[j] : 0.0;
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<double>(kernels::from_bf16(ta ? A[k * lda + i] : A[i * lda + k])) *
             kernels::from_bf16(tb ? B[j * ldb + k] : B[k * ldb + j]);
      C[i * ldc + j] = static_cast<float>(s + (beta != 0.f ? beta * C[i * ldc + j] : 0.0));
    }
}

TEST(Bf16, GemmEqualsTheProductOfTheRoundedOperands) {
  Rng rng(4);
  // M = 5 (one block), 64 (exactly one), 70 and 131 (a multiple of 64 and a tail)
  for (auto [M, N, K] : {std::tuple{5, 3, 2}, {64, 33, 17}, {70, 9, 64}, {131, 40, 100}})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (float beta : {0.f, 1.f, 0.5f})
          for (bool with_bias : {false, true}) {
            const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 1;
            std::vector<bf16> A((ta ? K : M) * lda), B((tb ? N : K) * ldb);
            std::vector<float> C(M * ldc), R, bias(N);
            for (auto& v : A) v = kernels::to_bf16(rng.uniform(-1, 1));
            for (auto& v : B) v = kernels::to_bf16(rng.uniform(-1, 1));
            for (auto& v : C) v = rng.uniform(-1, 1);
            for (auto& v : bias) v = rng.uniform(-1, 1);
            R = C;
            const float* pb = with_bias ? bias.data() : nullptr;
            kernels::gemm_bf16(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, beta, C.data(), ldc,
                               pb);
            naive(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, beta, R.data(), ldc, pb);
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < ldc; ++j)  // the padding column j = N stays untouched
                ASSERT_NEAR(C[i * ldc + j], R[i * ldc + j], 1e-5f * K)
                    << "M=" << M << " ta=" << ta << " tb=" << tb << " beta=" << beta
                    << " bias=" << with_bias << " at " << i << "," << j;
          }
}

TEST(Bf16, GemmOfOneShapeReadsEachCallsOwnOperands) {
  // the primitive of a shape is made once and kept: later calls must read and write their own
  // buffers (fresh ones each round, of one shape, with and without a bias), not the first call's
  Rng rng(5);
  const int64_t M = 64, N = 48, K = 32;
  struct Operands {
    std::vector<bf16> A, B;
    std::vector<float> C, R, bias;
  };
  std::vector<Operands> all;  // every round's buffers stay alive: each at a new address
  all.reserve(6);
  for (int round = 0; round < 3; ++round)
    for (bool with_bias : {false, true}) {
      auto& [A, B, C, R, bias] = all.emplace_back(Operands{
          std::vector<bf16>(M * K), std::vector<bf16>(N * K), std::vector<float>(M * N, 0.f),
          std::vector<float>(M * N, 0.f), std::vector<float>(N)});
      for (auto& v : A) v = kernels::to_bf16(rng.uniform(-1, 1));
      for (auto& v : B) v = kernels::to_bf16(rng.uniform(-1, 1));
      for (auto& v : bias) v = rng.uniform(-1, 1);
      const float* pb = with_bias ? bias.data() : nullptr;
      kernels::gemm_bf16(false, true, M, N, K, A.data(), K, B.data(), K, 0.f, C.data(), N, pb);
      naive(false, true, M, N, K, A.data(), K, B.data(), K, 0.f, R.data(), N, pb);
      for (int64_t i = 0; i < M * N; ++i)
        ASSERT_NEAR(C[i], R[i], 1e-5f * K) << "round " << round << " bias " << with_bias;
    }
}

TEST(Bf16, GemmWithNothingToSumLeavesBetaCPlusBias) {
  std::vector<float> C = {1.f, -2.f, 3.f, 4.f, 5.f, -6.f}, bias = {0.5f, 1.f, 2.f};
  const bf16 none = 0;
  kernels::gemm_bf16(false, true, 2, 3, 0, &none, 1, &none, 1, 0.5f, C.data(), 3, bias.data());
  EXPECT_EQ(C, (std::vector<float>{1.f, 0.f, 3.5f, 2.5f, 3.5f, -1.f}));
  kernels::gemm_bf16(false, true, 2, 3, 0, &none, 1, &none, 1, 0.f, C.data(), 3, nullptr);
  EXPECT_EQ(C, std::vector<float>(6, 0.f));
}

}  // namespace
}  // namespace heed
