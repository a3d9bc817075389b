// The latency terms of monotonic attention (nn/latency_loss.h): the expected delays of given
// alignments and the losses built on them, each against its formula written out in doubles,
// with finite-difference gradients.
#include "heed/nn/latency_loss.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "heed/kernels/random.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// E[d^h_i] = sum_j (j + 1) alpha^h_ij + |x| (1 - sum_j alpha^h_ij) for two heads over sources of
// 4 and 2 entries (row 1's padding entries 0) and targets of 3 and 1 (0 on padding steps); a
// row of mass 1 on entry j reads j + 1 tokens, a row of mass 0 the whole source.
TEST(LatencyLoss, ExpectedDelaysEqualTheirFormula) {
  static const std::vector<int32_t> src_len = {4, 2}, tgt_len = {3, 1};
  constexpr int64_t B = 2, H = 2, T = 3, S = 4;
  Rng rng(11);
  Tensor alpha = testing::random_tensor({B, H * T, S}, rng, 0.f, 0.25f);
  float* a = alpha.data();
  for (int64_t r = 0; r < H * T; ++r)
    std::fill_n(a + (H * T + r) * S + 2, 2, 0.f);  // row 1: padding
  std::fill_n(a, S, 0.f);  // head 0, step 0 of row 0: stops at entry 2 for sure
  a[2] = 1.f;
  std::fill_n(a + S, S, 0.f);  // head 0, step 1 of row 0: never stops
  Graph g(Mode::Inference);
  const Var d = expected_delays(g.constant(alpha), H, src_len, tgt_len);
  ASSERT_EQ(d.shape(), (Shape{B, H, T}));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        double want = 0;
        if (i < tgt_len[b]) {
          double mass = 0;
          for (int64_t j = 0; j < src_len[b]; ++j) {
            const double p = a[(b * H * T + h * T + i) * S + j];
            want += (j + 1) * p;
            mass += p;
          }
          want += src_len[b] * (1 - mass);
        }
        EXPECT_NEAR(d.value().data()[(b * H + h) * T + i], want, 1e-5)
            << "row " << b << ", head " << h << ", step " << i;
      }
  EXPECT_NEAR(d.value().data()[0], 3.f, 1e-6f) << "a stop at entry 2 has read 3 tokens";
  EXPECT_NEAR(d.value().data()[1], 4.f, 1e-6f) << "no stop: the whole source read";
  testing::expect_gradients(
      [&](Graph&, std::vector<Var>& x) { return expected_delays(x[0], H, src_len, tgt_len); },
      {alpha}, {.eps = 1e-2f, .rtol = 2e-2f, .atol = 1e-3f});
}

// The latency terms from two layers' delays [B = 2, h = 2, T = 3] (targets of 3 and 2, the
// padding step 0), against the formulas written out in doubles: L_avg with the heads' mean and
// with their softmax-weighted average, L_var the heads' variance at each real output; and their
// finite-difference gradients.
TEST(LatencyLoss, EqualsItsFormulas) {
  static const std::vector<int32_t> tgt_len = {3, 2};
  constexpr int64_t B = 2, h = 2, T = 3, L = 2, H = L * h, N = 5;
  Rng rng(7);
  std::vector<Tensor> in;
  for (int l = 0; l < L; ++l) {
    Tensor t = testing::random_tensor({B, h, T}, rng, 1.f, 6.f);
    for (int64_t k = 0; k < h; ++k) t.data()[(1 * h + k) * T + 2] = 0.f;  // row 1's padding
    in.push_back(t);
  }
  // D[b][H][i]: the heads of both layers side by side
  const auto D = [&](int64_t b, int64_t head, int64_t i) {
    const Tensor& t = in[static_cast<size_t>(head / h)];
    return static_cast<double>(t.data()[(b * h + head % h) * T + i]);
  };
  double avg_mean = 0, avg_weighted = 0, var = 0;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> A(H, 0.0);
    for (int64_t k = 0; k < H; ++k)
      for (int64_t i = 0; i < tgt_len[b]; ++i) A[k] += D(b, k, i) / tgt_len[b];
    double mean = 0, z = 0, weighted = 0;
    for (double a : A) mean += a / H, z += std::exp(a);
    for (double a : A) weighted += std::exp(a) / z * a;
    avg_mean += tgt_len[b] * mean / N;
    avg_weighted += tgt_len[b] * weighted / N;
    for (int64_t i = 0; i < tgt_len[b]; ++i) {
      double m = 0, sq = 0;
      for (int64_t k = 0; k < H; ++k) m += D(b, k, i) / H;
      for (int64_t k = 0; k < H; ++k) sq += (D(b, k, i) - m) * (D(b, k, i) - m) / H;
      var += sq / N;
    }
  }
  ASSERT_GT(avg_weighted, avg_mean + 0.1) << "the soft maximum should lie above the mean";
  struct Case {
    LatencyLoss c;
    double expected;
  };
  const Case cases[] = {
      {{.weight = 0.5f}, 0.5 * avg_mean},
      {{.weight = 0.5f, .gather = LatencyGather::Weighted}, 0.5 * avg_weighted},
      {{.var_weight = 0.25f}, 0.25 * var},
      {{.weight = 0.5f, .gather = LatencyGather::Weighted, .var_weight = 0.25f},
       0.5 * avg_weighted + 0.25 * var},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(::testing::Message() << "gather " << name_of(k.c.gather) << ", lambda "
                                      << k.c.weight << ", lambda_var " << k.c.var_weight);
    Graph g(Mode::Inference);
    const std::vector<Var> delays = {g.constant(in[0]), g.constant(in[1])};
    const float loss = monotonic_latency_loss(delays, tgt_len, k.c).value().data()[0];
    EXPECT_NEAR(loss, k.expected, 1e-5 * std::max(1.0, k.expected));
    testing::expect_gradients(
        [&](Graph&, std::vector<Var>& x) { return monotonic_latency_loss(x, tgt_len, k.c); }, in,
        {.eps = 1e-2f, .rtol = 2e-2f, .atol = 1e-3f});
  }
}

// The warm-up: both weights ramp linearly from 0 at update 0 to full at update `warmup` and stay
// there; without a warm-up they are full from the first update; the gather is kept.
TEST(LatencyLoss, WarmupRampsBothWeights) {
  const LatencyLoss c{
      .weight = 0.4f, .gather = LatencyGather::Weighted, .var_weight = 0.2f, .warmup = 100};
  EXPECT_FALSE(c.at_step(0).trains());  // nothing to compute at the first update
  EXPECT_FLOAT_EQ(c.at_step(25).weight, 0.1f);
  EXPECT_FLOAT_EQ(c.at_step(25).var_weight, 0.05f);
  EXPECT_EQ(c.at_step(25).gather, LatencyGather::Weighted);
  EXPECT_FLOAT_EQ(c.at_step(50).weight, 0.2f);
  for (int64_t step : {100, 101, 100000}) {
    EXPECT_EQ(c.at_step(step).weight, 0.4f);
    EXPECT_EQ(c.at_step(step).var_weight, 0.2f);
  }
  const LatencyLoss none{.weight = 0.4f};
  EXPECT_EQ(none.at_step(0).weight, 0.4f);
}

}  // namespace
}  // namespace heed
