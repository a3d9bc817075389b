// int8 inference GEMM: quantization error bounds and the int8 product against its formula on the
// quantized values (linear() and the RNN cells on the int8 copy against fp32:
// tests/autograd/inference_weights_test.cc).
#include "heed/kernels/quantize.h"

#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.h>

#include <cmath>
#include <cstdlib>

#include "heed/autograd/ops.h"
#include "heed/kernels/parallel.h"
#include "heed/nn/init.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

TEST(Quantize, RowsAreWithinHalfAStepAndUseTheFullRange) {
  Rng rng(3);
  const int64_t M = 7, K = 33;
  Tensor x = testing::random_tensor({M, K}, rng, -4, 4);
  for (int64_t k = 0; k < K; ++k) x.data()[3 * K + k] = 0.f;  // an all-zero row
  std::vector<int8_t> q(M * K);
  std::vector<float> s(M);
  kernels::quantize_rows(x.data(), M, K, q.data(), s.data());
  for (int64_t m = 0; m < M; ++m) {
    int maxq = 0;
    for (int64_t k = 0; k < K; ++k) {
      float v = x.data()[m * K + k];
      EXPECT_LE(std::fabs(q[m * K + k] * s[m] - v), 0.5f * s[m] * (1 + 1e-5f)) << m << "," << k;
      maxq = std::max(maxq, std::abs(static_cast<int>(q[m * K + k])));
    }
    if (m == 3) {
      EXPECT_EQ(maxq, 0);
      EXPECT_EQ(s[m], 1.f);
    } else {
      EXPECT_EQ(maxq, 127) << "row " << m;
    }
  }
}

TEST(Quantize, Int8GemmEqualsItsFormulaOnTheQuantizedValues) {
  Rng rng(4);
  for (auto [M, N, K] :
       {std::tuple<int64_t, int64_t, int64_t>{1, 70, 19}, {13, 129, 64}, {64, 300, 257}}) {
    Tensor x = testing::random_tensor({M, K}, rng, -2, 2);
    Tensor w = testing::random_tensor({N, K}, rng, -0.3f, 0.3f);
    Tensor b = testing::random_tensor({N}, rng);
    kernels::Int8Matrix qw = kernels::quantize_matrix(w.data(), N, K);
    std::vector<int8_t> qx(M * K);
    std::vector<float> sx(M), y(M * N);
    std::vector<int32_t> acc(M * N);
    kernels::quantize_rows(x.data(), M, K, qx.data(), sx.data());
    kernels::gemm_int8(M, qx.data(), sx.data(), qw, b.data(), acc.data(), y.data());
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        int64_t dot = 0;  // exact
        for (int64_t k = 0; k < K; ++k) dot += int64_t{qx[m * K + k]} * qw.q[n * K + k];
        double want = double(sx[m]) * qw.scale[n] * double(dot) + b.data()[n];
        ASSERT_NEAR(y[m * N + n], want, 1e-5 * (1 + std::fabs(want))) << M << "x" << N << "x" << K;
      }
  }
}

// keep_int8_off_amx in a fresh process (the "threadsafe" style re-executes the test binary for
// this test alone, so no oneDNN kernel ran before): where int8 products go through oneDNN, its
// ISA no longer includes AMX once capped; with heed's own int8 kernel nothing is capped (bf16
// training in the same process keeps AMX); either way the int8 product of a decoding shape is
// exact. Exit codes: 1 AMX still on, 2 a wrong sum, 3 capped although oneDNN's int8 GEMM is
// never called.
[[noreturn]] void cap_then_multiply() {
  const bool capped = kernels::keep_int8_off_amx();
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto amx = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_amx);
  if (capped && (isa & amx) == amx) std::exit(1);
  if (capped && kernels::int8_packed_kernel()) std::exit(3);
  Rng rng(6);
  const int64_t N = 768, K = 256;
  Tensor w = testing::random_tensor({N, K}, rng, -0.3f, 0.3f);
  kernels::Int8Matrix qw = kernels::quantize_matrix(w.data(), N, K);
  std::vector<int8_t> qx(K);
  for (int64_t k = 0; k < K; ++k) qx[k] = static_cast<int8_t>(k % 255 - 127);
  const float sx = 1.f;
  std::vector<float> y(N);
  std::vector<int32_t> acc(N);
  kernels::gemm_int8(1, qx.data(), &sx, qw, nullptr, acc.data(), y.data());
  for (int64_t n = 0; n < N; ++n) {  // |dot| < 2^24: s_w dot is one rounding, on every path
    int64_t dot = 0;
    for (int64_t k = 0; k < K; ++k) dot += int64_t{qx[k]} * qw.q[n * K + k];
    if (y[n] != qw.scale[n] * static_cast<float>(dot)) std::exit(2);
  }
  std::exit(0);
}

TEST(QuantizeDeathTest, CapsOneDnnOffAmxOnlyWhenItsInt8GemmIsUsed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(cap_then_multiply(), ::testing::ExitedWithCode(0), "");
}

// Every path of gemm_int8 on any CPU: heed's VNNI kernel (when built for it; rows of x taken in
// blocks of one to five, every block size below: 7 = 4 + 3, 9 = 5 + 4, 11 = 4 + 4 + 3, 12 = 3 x 4,
// 33 = 5 x 5 + 2 x 4, 2, 1; AMX tiles from 20 rows where the CPU has them), oneDNN's s8s8s32
// GEMM (exact with VNNI) and the fp32 GEMM on the quantized values that CPUs without VNNI take
// (q_float filled), against exact sums — the integer paths bit for bit in `acc` (heed's kernel
// keeps them in registers), and the same floats from the same sums — with bias and accumulation, at
// sizes off every block (64 rows of W, four bytes of k, 64 bytes of x); heed's kernel on one thread
// and on two.
TEST(Quantize, EveryInt8PathEqualsTheExactIntegerProduct) {
  enum class Path { Packed, OneDnn, Fp32 };
  Rng rng(6);
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{7, 96, 1200},  // fp32 sums round
                         {1, 70, 19},
                         {2, 1, 1},
                         {3, 129, 257},
                         {8, 64, 4},
                         {5, 200, 65},
                         {9, 65, 33},
                         {11, 130, 100},
                         {12, 130, 100},
                         {70, 130, 256},
                         // AMX's blocks of 32 rows (where the CPU has it): a block and a row
                         // short, rows padded, K padded to whole tiles, W's last group partial
                         {20, 64, 64},
                         {33, 300, 257},
                         {160, 70, 19}}) {
    Tensor x = testing::random_tensor({M, K}, rng, -2, 2);
    Tensor w = testing::random_tensor({N, K}, rng, -0.3f, 0.3f);
    Tensor b = testing::random_tensor({N}, rng);
    Tensor y0 = testing::random_tensor({M, N}, rng);
    const kernels::Int8Matrix full = kernels::quantize_matrix(w.data(), N, K);
    std::vector<int8_t> qx(M * K);
    std::vector<float> sx(M);
    kernels::quantize_rows(x.data(), M, K, qx.data(), sx.data());
    std::vector<float> first[2];  // y of the first path to run, without and with accumulation
    for (const auto& [threads, path] : {std::pair{1, Path::Packed}, std::pair{2, Path::Packed},
                                        std::pair{1, Path::OneDnn}, std::pair{1, Path::Fp32}}) {
      set_threads(threads);  // (70 x 130 x 256 splits its groups of W between two threads)
      kernels::Int8Matrix qw = full;
      if (path == Path::Packed && !kernels::int8_packed_kernel()) continue;
      if (path != Path::Packed) qw.packed.clear();
      if (path == Path::OneDnn && !kernels::int8_exact()) continue;  // it saturates without VNNI
      if (path == Path::OneDnn) qw.q_float.clear();
      if (path == Path::Fp32) qw.q_float.assign(qw.q.begin(), qw.q.end());
      const char* name = path == Path::Packed ? "packed" : path == Path::OneDnn ? "oneDNN" : "fp32";
      for (bool accumulate : {false, true}) {
        std::vector<float> y(y0.data(), y0.data() + M * N);
        std::vector<int32_t> acc(M * N, -1);
        kernels::gemm_int8(M, qx.data(), sx.data(), qw, b.data(), acc.data(), y.data(), accumulate);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            int64_t dot = 0;
            for (int64_t k = 0; k < K; ++k) dot += int64_t{qx[m * K + k]} * qw.q[n * K + k];
            if (path == Path::OneDnn || (path == Path::Fp32 && K <= 1040)) {
              ASSERT_EQ(acc[m * N + n], dot) << name << " " << M << "x" << N << "x" << K;
            }
            const double want = double(sx[m]) * qw.scale[n] * double(dot) + b.data()[n] +
                                (accumulate ? y0.data()[m * N + n] : 0.);
            ASSERT_NEAR(y[m * N + n], want, 1e-5 * (1 + std::fabs(want)))
                << name << " " << M << "x" << N << "x" << K << " at " << m << "," << n;
          }
        // the same integer sums give the same floats on every path, bit for bit (a row's output
        // must not depend on the batch beside it, which picks the path)
        if (first[accumulate].empty()) {
          first[accumulate] = y;
        } else if (path != Path::Fp32 || K <= 1040) {
          ASSERT_EQ(y, first[accumulate])
              << name << " " << M << "x" << N << "x" << K << ", threads " << threads;
        }
      }
    }
  }
  set_threads(1);
}

// A block of columns (W's rows c0 .. c0 + C - 1) into a strided y: the same floats as those
// columns of the whole product, on every path and at row counts either side of each path's
// threshold (heed's loop, oneDNN's sums from 12 rows).
TEST(Quantize, ColumnBlocksEqualTheWholeProductsColumns) {
  Rng rng(7);
  const int64_t N = 300, K = 100;
  Tensor w = testing::random_tensor({N, K}, rng, -0.3f, 0.3f);
  Tensor b = testing::random_tensor({N}, rng);
  const kernels::Int8Matrix full = kernels::quantize_matrix(w.data(), N, K);
  for (int64_t M : {1, 5, 11, 12, 40}) {
    Tensor x = testing::random_tensor({M, K}, rng, -2, 2);
    std::vector<int8_t> qx(M * K);
    std::vector<float> sx(M);
    kernels::quantize_rows(x.data(), M, K, qx.data(), sx.data());
    for (bool packed : {true, false}) {
      kernels::Int8Matrix qw = full;
      if (packed && !kernels::int8_packed_kernel()) continue;
      if (!packed) qw.packed.clear();
      std::vector<float> whole(M * N);
      std::vector<int32_t> acc(M * N);
      kernels::gemm_int8(M, qx.data(), sx.data(), qw, b.data(), acc.data(), whole.data());
      for (auto [c0, C] : {std::pair<int64_t, int64_t>{0, 64}, {64, 128}, {192, 108}, {256, 44}}) {
        const int64_t ldy = C + 3;
        std::vector<float> y(M * ldy, -9.f);
        kernels::gemm_int8_columns(M, qx.data(), sx.data(), qw, c0, C, b.data(), acc.data(),
                                   y.data(), ldy);
        for (int64_t m = 0; m < M; ++m) {
          for (int64_t n = 0; n < C; ++n)
            ASSERT_EQ(y[m * ldy + n], whole[m * N + c0 + n])
                << (packed ? "packed " : "oneDNN/fp32 ") << M << " rows, columns " << c0 << "+"
                << n;
          for (int64_t n = C; n < ldy; ++n) ASSERT_EQ(y[m * ldy + n], -9.f);  // untouched
        }
      }
    }
  }
  std::vector<float> y(64);
  std::vector<int32_t> acc(64);
  std::vector<int8_t> q(K);
  float s = 1;
  EXPECT_THROW(
      kernels::gemm_int8_columns(1, q.data(), &s, full, 10, 64, nullptr, acc.data(), y.data(), 64),
      Error);  // not at a block's start
}

}  // namespace
}  // namespace heed
