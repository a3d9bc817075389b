// Kernels against naive references: GEMM (every transpose, strided, batched, threaded),
// vectorised math against <cmath>, broadcasting and its reduction, permutation.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "heed/kernels/elementwise.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/layout.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/kernels/reduce.h"
#include "heed/kernels/softmax.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// C = alpha op(A) op(B) + beta C, the textbook triple loop in double.
void naive_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<double>(ta ? A[k * lda + i] : A[i * lda + k]) *
             (tb ? B[j * ldb + k] : B[k * ldb + j]);
      C[i * ldc + j] = static_cast<float>(alpha * s + beta * C[i * ldc + j]);
    }
}

TEST(Gemm, MatchesNaiveForAllTransposesAndStrides) {
  Rng rng(1);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (auto [M, N, K] : {std::tuple{1, 1, 1}, {7, 5, 3}, {33, 65, 17}, {64, 1, 129}}) {
        int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 1;  // padded rows
        std::vector<float> A((ta ? K : M) * lda), B((tb ? N : K) * ldb), C(M * ldc), R;
        for (auto& v : A) v = rng.uniform(-1, 1);
        for (auto& v : B) v = rng.uniform(-1, 1);
        for (auto& v : C) v = rng.uniform(-1, 1);
        R = C;
        kernels::gemm(ta, tb, M, N, K, 0.7f, A.data(), lda, B.data(), ldb, 0.3f, C.data(), ldc);
        naive_gemm(ta, tb, M, N, K, 0.7f, A.data(), lda, B.data(), ldb, 0.3f, R.data(), ldc);
        for (size_t i = 0; i < C.size(); ++i)
          ASSERT_NEAR(C[i], R[i], 1e-4f) << "ta=" << ta << " tb=" << tb << " M=" << M;
      }
}

// The tiny products gemm() sends to the tile loops (an RNN attention's context and its gradients
// per sentence: 1 x S x D, 1 x S x D with B transposed, S x D x 1 with A transposed), beta 0
// (C never read: it holds NaN) and 1, padded strides; sizes just off those paths; and skinny
// ones (K <= 16, location attention's U f), which stay with oneDNN: the tile loops measured
// 1.6-2.2x slower there.
TEST(Gemm, TinyAndSkinnyProductsMatchNaive) {
  Rng rng(3);
  struct Case {
    bool ta, tb;
    int64_t M, N, K;
  };
  for (const Case c :
       {Case{false, false, 1, 256, 20}, Case{false, true, 1, 20, 256},
        Case{true, false, 20, 256, 1}, Case{false, true, 2, 32, 7}, Case{true, false, 3, 32, 5},
        Case{false, false, 5, 48, 9}, Case{false, true, 3, 20, 8}, Case{false, true, 1, 33, 4},
        Case{false, false, 1, 20, 4},
        // skinny (K <= 16): location attention's U f and per-step weight gradients
        Case{false, true, 3072, 320, 10}, Case{false, false, 700, 48, 16},
        Case{true, true, 333, 32, 3}, Case{true, false, 90, 64, 1},
        Case{false, true, 50, 20, 10}}) {
    for (float beta : {0.f, 1.f}) {
      const int64_t lda = (c.ta ? c.M : c.K) + 3, ldb = (c.tb ? c.K : c.N) + 2, ldc = c.N + 1;
      std::vector<float> A((c.ta ? c.K : c.M) * lda), B((c.tb ? c.N : c.K) * ldb), C(c.M * ldc);
      for (auto& v : A) v = rng.uniform(-1, 1);
      for (auto& v : B) v = rng.uniform(-1, 1);
      for (auto& v : C) v = beta == 0.f ? std::nanf("") : rng.uniform(-1, 1);
      const std::vector<float> before = C;
      std::vector<float> R = C;
      if (beta == 0.f) std::fill(R.begin(), R.end(), 0.f);  // (the naive loop reads C)
      kernels::gemm(c.ta, c.tb, c.M, c.N, c.K, 0.7f, A.data(), lda, B.data(), ldb, beta, C.data(),
                    ldc);
      naive_gemm(c.ta, c.tb, c.M, c.N, c.K, 0.7f, A.data(), lda, B.data(), ldb, beta, R.data(),
                 ldc);
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = 0; j < c.N; ++j)
          ASSERT_NEAR(C[i * ldc + j], R[i * ldc + j], 1e-5f)
              << c.ta << c.tb << " " << c.M << "x" << c.N << "x" << c.K << " beta " << beta;
      for (int64_t i = 0; i < c.M; ++i)  // the column past N is the row padding: untouched
        ASSERT_EQ(std::bit_cast<uint32_t>(C[i * ldc + c.N]),
                  std::bit_cast<uint32_t>(before[i * ldc + c.N]));
    }
  }
}

TEST(Gemm, BatchedMatchesLoopOnBothThreadPaths) {
  Rng rng(2);
  const int64_t batch = 6, M = 5, N = 7, K = 4;
  std::vector<float> A(batch * M * K), B(K * N), C(batch * M * N, 0.f), R(batch * M * N, 0.f);
  for (auto& v : A) v = rng.uniform(-1, 1);
  for (auto& v : B) v = rng.uniform(-1, 1);
  for (int threads : {1, 2}) {
    set_threads(threads);
    // B shared by the batch (stride 0)
    kernels::gemm_batched(false, false, batch, M, N, K, 1.f, A.data(), K, M * K, B.data(), N, 0,
                          0.f, C.data(), N, M * N);
    for (int64_t i = 0; i < batch; ++i)
      naive_gemm(false, false, M, N, K, 1.f, A.data() + i * M * K, K, B.data(), N, 0.f,
                 R.data() + i * M * N, N);
    for (size_t i = 0; i < C.size(); ++i) ASSERT_NEAR(C[i], R[i], 1e-5f);
  }
  set_threads(1);
}

TEST(VMath, AgreesWithStd) {
  for (float x = -20.f; x <= 20.f; x += 0.0137f) {
    EXPECT_NEAR(vmath::exp(x), std::exp(x), 3e-7f * std::exp(x)) << x;
    EXPECT_NEAR(vmath::tanh(x), std::tanh(x), 1e-6f) << x;
    EXPECT_NEAR(vmath::sigmoid(x), 1.f / (1.f + std::exp(-x)), 1e-6f) << x;
  }
  for (float x : {-1e-3f, 1e-4f, 0.3f, -0.6f})  // near 0 tanh keeps relative precision
    EXPECT_NEAR(vmath::tanh(x), std::tanh(x), 1e-6f * std::fabs(x));
  // log over positive normals from FLT_MIN to 1e30, through 1 and the mantissa's split point
  for (float x = std::numeric_limits<float>::min(); x < 1e30f; x *= 1.0137f)
    EXPECT_NEAR(vmath::log(x), std::log(static_cast<double>(x)),
                3e-7 * std::max(1.0, std::fabs(std::log(static_cast<double>(x)))))
        << x;
  for (float x : {1.f, 0.70710677f, 0.70710683f, 1.4142135f, 2.f, 0.5f, FLT_EPSILON})
    EXPECT_NEAR(vmath::log(x), std::log(static_cast<double>(x)),
                3e-7 * std::max(1.0, std::fabs(std::log(static_cast<double>(x)))))
        << x;
  EXPECT_EQ(vmath::log(1.f), 0.f);
  EXPECT_EQ(vmath::exp(-std::numeric_limits<float>::infinity()), 0.f);
  EXPECT_EQ(vmath::exp(-100.f), 0.f);
  EXPECT_TRUE(std::isfinite(vmath::exp(88.f)));
  EXPECT_EQ(vmath::tanh(30.f), 1.f);
  EXPECT_EQ(vmath::tanh(-30.f), -1.f);
  // GELU's derivative against a central difference of GELU itself.
  for (float x = -4.f; x <= 4.f; x += 0.25f)
    EXPECT_NEAR(vmath::gelu_grad(x), (vmath::gelu(x + 1e-3f) - vmath::gelu(x - 1e-3f)) / 2e-3f,
                2e-3f);
}

#if defined(__AVX512F__)
// The 16-lane tanh of the additive energy against tanh in doubles: relative error below 3e-7
// from 1e-30 to the clamp, through the rounding to 1 and at infinities; NaN stays NaN.
TEST(VMath, Tanh16AgreesWithDoubles) {
  std::vector<float> xs{0.f,
                        -0.f,
                        9.f,
                        -9.f,
                        30.f,
                        -30.f,
                        std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity()};
  for (int i = -14600; i <= 14600; ++i) xs.push_back(0.00137f * static_cast<float>(i));
  for (int i = 0; i < 6941; ++i)  // 1e-30 up to 1, by factors of 1.01, both signs
    xs.push_back((i % 2 ? 1.f : -1.f) * 1e-30f * std::pow(1.01f, static_cast<float>(i)));
  while (xs.size() % 16) xs.push_back(0.5f);
  for (size_t i = 0; i < xs.size(); i += 16) {
    float out[16];
    _mm512_storeu_ps(out, vmath::tanh16(_mm512_loadu_ps(&xs[i])));
    for (size_t l = 0; l < 16; ++l) {
      const double ref = std::tanh(static_cast<double>(xs[i + l]));
      ASSERT_LE(std::fabs(out[l] - ref), 3e-7 * std::fabs(ref)) << xs[i + l];
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float out[16];
  _mm512_storeu_ps(out, vmath::tanh16(_mm512_set1_ps(nan)));
  EXPECT_TRUE(std::isnan(out[0]));
}
#endif

// dot and sum against double sums, on lengths around every vector width; the entries past n are
// NaN, so a tail that read them (an unmasked last vector) would fail.
TEST(VMath, DotAndSumReadOnlyTheirEntries) {
  Rng rng(5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n = 0; n <= 50; ++n) {
    std::vector<float> a(n + 16, nan), b(n + 16, nan);
    double dot = 0, sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      a[k] = rng.uniform(-1, 1);
      b[k] = rng.uniform(-1, 1);
      dot += static_cast<double>(a[k]) * b[k];
      sum += a[k];
    }
    EXPECT_NEAR(vmath::dot(a.data(), b.data(), n), dot, 1e-6 * (n + 1)) << n;
    EXPECT_NEAR(vmath::sum(a.data(), n), sum, 1e-6 * (n + 1)) << n;
  }
}

// dot4 is four dot() calls, bit for bit (attention's scores must not move), at every head size
// it takes, for four queries or one; entries of wildly different sizes make any change in the order
// of the sums show.
TEST(VMath, Dot4IsFourDotsBitForBit) {
  Rng rng(11);
  for (int64_t D : {16, 32, 48, 64, 128}) {
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> a(static_cast<size_t>(4 * D)), b(a.size());
      for (size_t k = 0; k < a.size(); ++k) {
        a[k] = rng.uniform(-1, 1) * std::ldexp(1.f, static_cast<int>(rng.below(40)) - 20);
        b[k] = rng.uniform(-1, 1);
      }
      for (int64_t lda : {int64_t{0}, D}) {  // one a against four b, or four of each
        float got[4];
        vmath::dot4(a.data(), lda, b.data(), D, D, got);
        for (int64_t i = 0; i < 4; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
                    std::bit_cast<uint32_t>(vmath::dot(a.data() + i * lda, b.data() + i * D, D)))
              << "D " << D << " lda " << lda << " trial " << trial << " sum " << i;
      }
    }
  }
}

// sum_exp is exp() of every x_j - m summed in its stated order (AVX-512: lane j mod 16 of one
// accumulator, the tail into lane 0, the lanes 0 to 15; otherwise in turn, the simd loop's own
// order, checked to float rounding), bit for bit: lengths around the vector width, entries
// spread over 60 units (many below exp's -87.3, where it is 0), -inf (masked logits), m above
// the maximum; and NaN stays NaN.
TEST(VMath, SumExpIsExpSummedInItsOrder) {
  Rng rng(12);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 3, 15, 16, 17, 33, 179, 512, 7859}) {
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = rng.normal() * (trial % 3 == 0 ? 60.f : 6.f);
      if (trial % 4 == 1) x[static_cast<size_t>(n / 2)] = -inf;
      const float m = *std::max_element(x.begin(), x.end()) + (trial % 5 == 2 ? 3.f : 0.f);
      const float got = vmath::sum_exp(x.data(), n, m);
#if defined(__AVX512F__)
      float lane[16] = {};
      int64_t j = 0;
      for (; j + 16 <= n; j += 16)
        for (int i = 0; i < 16; ++i) lane[i] += vmath::exp(x[static_cast<size_t>(j + i)] - m);
      for (; j < n; ++j) lane[0] += vmath::exp(x[static_cast<size_t>(j)] - m);
      float want = 0.f;
      for (float v : lane) want += v;
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
          << "n " << n << " trial " << trial;
#else
      double want = 0;
      for (float v : x) want += vmath::exp(v - m);
      ASSERT_NEAR(got, want, 1e-6 * want) << "n " << n << " trial " << trial;
#endif
    }
  }
  std::vector<float> x = {0.f, -1.f, std::numeric_limits<float>::quiet_NaN(), -2.f};
  EXPECT_TRUE(std::isnan(vmath::sum_exp(x.data(), 4, 0.f)));
  x.assign(20, -inf);
  EXPECT_EQ(vmath::sum_exp(x.data(), 20, 0.f), 0.f);
}

// The vectorised maxima and argmax against std::max_element, on lengths around every vector width,
// with the maximum at each position in turn, all-negative rows and -inf (softmax masks).
TEST(VMath, MaxMaxAbsAndArgmaxAgreeWithStd) {
  const float inf = std::numeric_limits<float>::infinity();
  Rng rng(3);
  for (int64_t n : {1, 2, 7, 15, 16, 17, 31, 33, 64, 100, 1003}) {
    std::vector<float> x(n);
    for (auto& v : x) v = rng.uniform(-15.f, -5.f);  // all negative
    for (int64_t at = 0; at < n; at += std::max<int64_t>(1, n / 5)) {
      std::vector<float> y = x;
      y[at] = -1.f;  // the maximum
      EXPECT_EQ(vmath::max(y.data(), n, -inf), -1.f) << n << " " << at;
      EXPECT_EQ(vmath::max(y.data(), n, 0.f), 0.f);  // init above every entry
      y[at] = -30.f;                                 // the largest magnitude
      EXPECT_EQ(vmath::max_abs(y.data(), n), 30.f) << n << " " << at;
      y[at] = 30.f;
      EXPECT_EQ(vmath::max_abs(y.data(), n), 30.f);
      EXPECT_EQ(vmath::max(y.data(), n, -inf), *std::max_element(y.begin(), y.end()));
      EXPECT_EQ(vmath::argmax(y.data(), n), at);
      y[n - 1] = 30.f;  // a tie: the first index, as std::max_element
      EXPECT_EQ(vmath::argmax(y.data(), n), std::max_element(y.begin(), y.end()) - y.begin());
    }
  }
  std::vector<float> masked(9, -inf);
  EXPECT_EQ(vmath::max(masked.data(), 9, -inf), -inf);
  EXPECT_EQ(vmath::max(masked.data(), 0, -inf), -inf);  // empty: the initial value
  EXPECT_EQ(vmath::max_abs(masked.data(), 0), 0.f);
}

// first_at_least against a plain scan: one-hot rows (a monotonic attention's stop) of lengths
// around its 64-entry blocks, the hit in every block and nowhere, and a threshold met exactly.
TEST(VMath, FirstAtLeastIsTheFirstIndexAScanFinds) {
  for (int64_t n : {0, 1, 63, 64, 65, 200, 2000}) {
    for (int64_t at = -1; at < n; at += (n > 100 ? 37 : 1)) {
      std::vector<float> x(static_cast<size_t>(n), 0.f);
      if (at >= 0) x[at] = 1.f;
      if (at >= 1) x[at - 1] = 0.5f;  // met exactly: the first index is at - 1
      const int64_t want =
          std::find_if(x.begin(), x.end(), [](float v) { return v >= 0.5f; }) - x.begin();
      EXPECT_EQ(vmath::first_at_least(x.data(), n, 0.5f), want) << n << " " << at;
      EXPECT_EQ(vmath::first_at_least(x.data(), n, 2.f), n);
    }
  }
}

// top_k is a stable sort by descending value, cut at k: random rows (the k-th often far into
// the row), many ties, rising rows (every entry enters), -inf entries, k = n.
// log_sum_exp is the normaliser log_softmax subtracts: x_j - log_sum_exp(x) equals the
// log-softmax row bit for bit, and log sum exp in double to float rounding; a row of -inf gives
// -inf, and rows far from 0 do not overflow.
TEST(LogSumExp, IsTheLogSoftmaxNormaliser) {
  Rng rng(3);
  for (int64_t n : {1, 7, 16, 33, 7859}) {
    for (float shift : {0.f, 80.f, -300.f}) {
      std::vector<float> x(static_cast<size_t>(n)), y(x.size());
      for (float& v : x) v = 4.f * rng.normal() + shift;
      kernels::softmax_forward(x.data(), {}, y.data(), Shape{1, n}, /*log=*/true);
      const float lse = kernels::log_sum_exp(x.data(), n);
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(x[j] - lse, y[j]) << n << " " << j;
      double m = *std::max_element(x.begin(), x.end()), s = 0;
      for (float v : x) s += std::exp(static_cast<double>(v) - m);
      EXPECT_NEAR(lse, m + std::log(s), 1e-6 * std::max(1.0, std::fabs(m)));
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> none = {-inf, -inf, -inf};
  EXPECT_EQ(kernels::log_sum_exp(none.data(), 3), -inf);
}

TEST(TopK, IsAStableDescendingSortCutAtK) {
  Rng rng(5);
  auto check_row = [](const std::vector<float>& x, int64_t k) {
    std::vector<int32_t> want(x.size()), got(static_cast<size_t>(k));
    for (size_t i = 0; i < x.size(); ++i) want[i] = static_cast<int32_t>(i);
    std::stable_sort(want.begin(), want.end(), [&](int32_t a, int32_t b) { return x[a] > x[b]; });
    want.resize(static_cast<size_t>(k));
    kernels::top_k(x.data(), static_cast<int64_t>(x.size()), k, got.data());
    EXPECT_EQ(got, want) << "n " << x.size() << " k " << k;
  };
  for (int64_t n : {1, 5, 16, 17, 40, 1000, 6007}) {
    std::vector<float> random(n), ties(n), rising(n);
    for (int64_t i = 0; i < n; ++i) {
      random[i] = rng.uniform(-10.f, 0.f);
      ties[i] = static_cast<float>(rng.below(4));
      rising[i] = static_cast<float>(i) - (i % 7 == 3 ? std::numeric_limits<float>::infinity() : 0);
    }
    for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{5}, n}) {
      if (k > n) continue;
      check_row(random, k);
      check_row(ties, k);
      check_row(rising, k);
    }
  }
  std::vector<float> x(4, 0.f);
  std::vector<int32_t> idx(5);
  EXPECT_THROW(kernels::top_k(x.data(), 4, 5, idx.data()), Error);
}

// A row read in blocks as the output layer's reader does (best_outputs): LogSumExp::add gives
// each block's maximum, and a block TopK::can_enter refuses is not offered to TopK::add at all.
// The k best are top_k's of the whole row (ties and -inf entries included), blocks are skipped
// (most of a random row's, once k are found), and log Z is the whole row's.
TEST(TopK, BlocksRefusedByTheirMaximumChangeNothing) {
  Rng rng(7);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {5, 40, 6007}) {
    std::vector<float> random(n), ties(n), rising(n);
    for (int64_t i = 0; i < n; ++i) {
      random[i] = rng.uniform(-10.f, 0.f);
      ties[i] = static_cast<float>(rng.below(4));
      rising[i] = static_cast<float>(i) - (i % 7 == 3 ? inf : 0);
    }
    for (const auto* x : {&random, &ties, &rising})
      for (int64_t block : {1, 16, 512})
        for (int64_t k : {1, 5}) {
          if (k > n) continue;
          std::vector<int32_t> want(static_cast<size_t>(k)), ids(static_cast<size_t>(k));
          std::vector<float> values(static_cast<size_t>(k));
          kernels::top_k(x->data(), n, k, want.data());
          kernels::TopK top{k, ids.data(), values.data()};
          kernels::LogSumExp lse;
          int64_t skipped = 0;
          for (int64_t j = 0; j < n; j += block) {
            const int64_t c = std::min(block, n - j);
            const float m = lse.add(x->data() + j, c);
            ASSERT_EQ(m, *std::max_element(x->begin() + j, x->begin() + j + c));
            if (!top.can_enter(m)) {
              ++skipped;
              continue;
            }
            top.add(x->data() + j, c, static_cast<int32_t>(j));
          }
          EXPECT_EQ(ids, want) << "n " << n << " block " << block << " k " << k;
          const float whole = kernels::log_sum_exp(x->data(), n);
          // the sum's rounding grows with the blocks added one after another
          const auto blocks = static_cast<float>(n / block + 16);
          EXPECT_NEAR(lse.value(), whole, 2e-7f * (blocks + std::fabs(whole)));
          if (x == &random && n == 6007 && block == 16) {
            EXPECT_GT(skipped, n / block / 2);
          }
          if (x == &rising && block > 1) {  // every block holds a new best (but -inf entries)
            EXPECT_EQ(skipped, 0);
          }
        }
  }
}

TEST(Elementwise, BroadcastMatchesIndexArithmetic) {
  Rng rng(3);
  Shape sa{2, 1, 4}, sb{3, 1}, out{2, 3, 4};
  Tensor a = testing::random_tensor(sa, rng), b = testing::random_tensor(sb, rng);
  Tensor c = Tensor::empty(out);
  kernels::binary(kernels::Binary::Sub, a.data(), sa, b.data(), sb, c.data(), out);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(c.data()[(i * 3 + j) * 4 + k], a.data()[i * 4 + k] - b.data()[j]);
  // reduce_to sums the broadcast axes back
  Tensor da = Tensor::zeros(sa), db = Tensor::zeros(sb);
  kernels::reduce_to(c.data(), out, da.data(), sa, true);
  kernels::reduce_to(c.data(), out, db.data(), sb, true);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int j = 0; j < 3; ++j) s += c.data()[(i * 3 + j) * 4 + k];
      EXPECT_NEAR(da.data()[i * 4 + k], s, 1e-5);
    }
  for (int j = 0; j < 3; ++j) {
    double s = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) s += c.data()[(i * 3 + j) * 4 + k];
    EXPECT_NEAR(db.data()[j], s, 1e-5);
  }
}

TEST(Elementwise, LargeTensorsGiveTheSameResultThreaded) {
  Rng rng(4);
  Shape s{300, 1000};
  Tensor x = testing::random_tensor(s, rng, -3, 3);
  Tensor y1 = Tensor::empty(s), y2 = Tensor::empty(s);
  set_threads(1);
  kernels::unary_forward(kernels::Unary::Tanh, x.data(), y1.data(), x.numel());
  set_threads(2);
  kernels::unary_forward(kernels::Unary::Tanh, x.data(), y2.data(), x.numel());
  set_threads(1);
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(y1.data()[i], y2.data()[i]);
}

// The fused loss-and-gradient kernel of the output layer against the forward then the backward
// kernel: in place in fp32, rounded into bf16, with an ignored row, db's sums, on 1 and 2 threads.
TEST(CrossEntropy, WithGradEqualsForwardThenBackward) {
  Rng rng(9);
  const int64_t N = 41, V = 1000;  // N V > 32768: the threaded path when 2 threads are allowed
  const float eps = 0.1f;
  const int32_t ignore = -1;
  Tensor logits = testing::random_tensor(Shape{N, V}, rng, -6, 6);
  std::vector<int32_t> targets(N);
  for (int64_t r = 0; r < N; ++r) targets[r] = static_cast<int32_t>((r * 7919) % V);
  targets[5] = ignore;
  // the two-kernel reference: p, then dz = 0 + (p - q), and db by rows
  std::vector<float> p(N * V), want(N * V, 0.f), want_db(V, 0.f);
  int64_t want_n = 0;
  const double want_loss = kernels::cross_entropy_forward(logits.data(), N, V, targets.data(),
                                                          ignore, eps, p.data(), &want_n);
  kernels::cross_entropy_backward(p.data(), N, V, targets.data(), ignore, eps, 1.f, want.data());
  for (int64_t r = 0; r < N; ++r)
    for (int64_t j = 0; j < V; ++j) want_db[j] += want[r * V + j];
  for (int threads : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    set_threads(threads);
    // fp32: dz over the logits in place
    std::vector<float> z(logits.data(), logits.data() + N * V), db(V, 0.5f);
    int64_t n = 0;
    const double loss = kernels::cross_entropy_with_grad(z.data(), N, V, targets.data(), ignore,
                                                         eps, nullptr, db.data(), &n);
    EXPECT_EQ(n, want_n);
    EXPECT_NEAR(loss, want_loss, 1e-9 * std::abs(want_loss));
    for (int64_t i = 0; i < N * V; ++i) ASSERT_NEAR(z[i], want[i], 1e-7f) << i;
    for (int64_t j = 0; j < V; ++j) ASSERT_NEAR(db[j], 0.5f + want_db[j], 1e-5f) << j;
    for (int64_t j = 0; j < V; ++j) ASSERT_EQ(z[5 * V + j], 0.f);  // the ignored row
    // bf16: dz rounded into its own buffer, no db
    std::vector<float> z2(logits.data(), logits.data() + N * V);
    std::vector<kernels::bf16> d(N * V, kernels::bf16{0x7fc0});  // NaN where nothing is written
    EXPECT_NEAR(kernels::cross_entropy_with_grad(z2.data(), N, V, targets.data(), ignore, eps,
                                                 d.data(), nullptr, &n),
                want_loss, 1e-9 * std::abs(want_loss));
    for (int64_t i = 0; i < N * V; ++i)  // one bf16 rounding of (nearly) the same value
      ASSERT_NEAR(kernels::from_bf16(d[i]), want[i], std::abs(want[i]) / 128 + 1e-30f) << i;
  }
  set_threads(1);
  std::vector<int32_t> bad = targets;
  bad[3] = static_cast<int32_t>(V);
  std::vector<float> z(logits.data(), logits.data() + N * V);
  int64_t n = 0;
  EXPECT_THROW(kernels::cross_entropy_with_grad(z.data(), N, V, bad.data(), ignore, eps, nullptr,
                                                nullptr, &n),
               Error);
}

TEST(Layout, PermuteMatchesIndexArithmetic) {
  Shape s{2, 3, 4, 5};
  Tensor x = Tensor::empty(s);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>(i);
  Tensor y = Tensor::empty({4, 2, 5, 3});
  kernels::permute(x.data(), s, {2, 0, 3, 1}, y.data(), false);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d)
          EXPECT_EQ(y.data()[((c * 2 + a) * 5 + d) * 3 + b],
                    x.data()[((a * 3 + b) * 4 + c) * 5 + d]);
}

}  // namespace
}  // namespace heed
