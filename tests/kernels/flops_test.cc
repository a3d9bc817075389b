// The product counter (kernels/flops.h): every GEMM door adds exactly 2 M N K, and a training
// step of linear() counts its three products (y = x W^T, dx = dy W, dW = dy^T x) and no more.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/kernels/bf16.h"
#include "heed/kernels/flops.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/quantize.h"
#include "heed/kernels/tile_gemm.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// The operations counted while f runs.
template <class F>
double counted(F f) {
  const double before = kernels::product_flops();
  f();
  return kernels::product_flops() - before;
}

TEST(FlopCount, EveryGemmDoorCountsTwoMNK) {
  constexpr int64_t M = 3, N = 80, K = 7;
  std::vector<float> a(M * K, 1.f), b(K * N, 1.f), c(M * N);
  EXPECT_EQ(counted([&] {
              kernels::gemm(false, false, M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, c.data(), N);
            }),
            2.0 * M * N * K);
  EXPECT_EQ(counted([&] {
              kernels::gemm_batched(false, false, 4, M, N, K, 1.f, a.data(), K, 0, b.data(), N, 0,
                                    0.f, c.data(), N, 0);
            }),
            4 * 2.0 * M * N * K);
  std::vector<kernels::bf16> ha(M * K, kernels::to_bf16(1.f)), hb(K * N, kernels::to_bf16(1.f));
  EXPECT_EQ(counted([&] {
              kernels::gemm_bf16(false, false, M, N, K, ha.data(), K, hb.data(), N, 0.f, c.data(),
                                 N);
            }),
            2.0 * M * N * K);
  // int8: y [M, N] = x [M, K] W^T with W [N, K]
  std::vector<float> w(N * K, 0.5f);
  const kernels::Int8Matrix q = kernels::quantize_matrix(w.data(), N, K);
  std::vector<int8_t> qx(M * K, 1);
  std::vector<float> sx(M, 1.f);
  std::vector<int32_t> acc(M * N);
  EXPECT_EQ(counted([&] {
              kernels::gemm_int8(M, qx.data(), sx.data(), q, nullptr, acc.data(), c.data());
            }),
            2.0 * M * N * K);
  // the attention's tiles: many rows (a product) and few rows (dot products) alike
  constexpr int64_t T = 32, D = 16;
  std::vector<float> qk(T * D, 1.f), s(T * T), scratch(D * T);
  for (int64_t rows : {int64_t{1}, T})
    EXPECT_EQ(counted([&] {
                kernels::tile_gemm_abt(rows, T, D, 1.f, qk.data(), D, qk.data(), D, s.data(), T,
                                       scratch.data());
              }),
              2.0 * rows * T * D);
}

TEST(FlopCount, ALinearTrainingStepCountsItsThreeProducts) {
  constexpr int64_t B = 6, In = 12, Out = 20;
  Rng rng(3);
  Graph g(Mode::Train);
  Var x = g.variable(testing::random_tensor({B, In}, rng));
  Var w = g.variable(testing::random_tensor({Out, In}, rng));
  Var bias = g.variable(testing::random_tensor({Out}, rng));
  const double forward = counted([&] {
    Var y = linear(x, w, bias);
    g.backward(sum_all(y));
  });
  EXPECT_EQ(forward, 3 * 2.0 * B * In * Out);
}

}  // namespace
}  // namespace heed
