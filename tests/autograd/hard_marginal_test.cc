// The exact hard-attention marginal (Wu, Shapiro & Cotterell 2018) against its definition, the
// sum over source positions log sum_j alpha_j softmax(base + keys_j)_v computed directly in long
// double, with padding (alpha = 0) and extreme logits; every row a distribution; and its
// finite-difference gradients for all three inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "heed/autograd/ops.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// log_alpha rows: a softmax of random energies over the first len_b positions, -inf after.
Tensor random_log_alpha(int64_t B, int64_t S, const std::vector<int64_t>& len, Rng& rng) {
  Tensor la = Tensor::empty(Shape{B, S});
  for (int64_t b = 0; b < B; ++b) {
    double z = 0;
    for (int64_t j = 0; j < len[b]; ++j) {
      la.data()[b * S + j] = rng.uniform(-2.f, 2.f);
      z += std::exp(static_cast<double>(la.data()[b * S + j]));
    }
    for (int64_t j = 0; j < S; ++j)
      la.data()[b * S + j] = j < len[b] ? static_cast<float>(la.data()[b * S + j] - std::log(z))
                                        : -std::numeric_limits<float>::infinity();
  }
  return la;
}

TEST(HardMarginal, EqualsTheSumOverPositions) {
  const int64_t B = 3, S = 5, V = 7;
  Rng rng(3);
  Tensor base = testing::random_tensor(Shape{B, V}, rng, -3.f, 3.f);
  Tensor keys = testing::random_tensor(Shape{B, S, V}, rng, -3.f, 3.f);
  keys.data()[2] = 60.f;  // one far larger logit: the softmax must not overflow
  keys.data()[(1 * S + 2) * V + 4] = -60.f;
  const std::vector<int64_t> len = {5, 3, 1};
  Tensor la = random_log_alpha(B, S, len, rng);
  Graph g(Mode::Inference);
  Var out = hard_marginal(g.constant(base), g.constant(keys), g.constant(la));
  ASSERT_EQ(out.shape(), (Shape{B, V}));
  for (int64_t b = 0; b < B; ++b) {
    long double total = 0;
    for (int64_t v = 0; v < V; ++v) {
      long double p = 0;
      for (int64_t j = 0; j < len[b]; ++j) {
        long double z = 0;
        for (int64_t u = 0; u < V; ++u)
          z += std::exp(static_cast<long double>(base.data()[b * V + u]) +
                        keys.data()[(b * S + j) * V + u]);
        p += std::exp(static_cast<long double>(la.data()[b * S + j])) *
             std::exp(static_cast<long double>(base.data()[b * V + v]) +
                      keys.data()[(b * S + j) * V + v]) /
             z;
      }
      total += p;
      EXPECT_NEAR(out.value().data()[b * V + v], static_cast<double>(std::log(p)),
                  1e-5 * std::max(1.0, std::fabs(static_cast<double>(std::log(p)))))
          << b << " " << v;
    }
    EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-6);
  }
  // one position: the plain log-softmax of base + keys_0
  Graph g1(Mode::Inference);
  Tensor zero = Tensor::zeros(Shape{1, 1});
  Tensor k1 = Tensor::empty(Shape{1, 1, V}), b1 = Tensor::empty(Shape{1, V});
  for (int64_t v = 0; v < V; ++v) {
    k1.data()[v] = keys.data()[v];
    b1.data()[v] = base.data()[v];
  }
  Var one = hard_marginal(g1.constant(b1), g1.constant(k1), g1.constant(zero));
  Var ref = log_softmax(g1.constant(b1) + reshape(g1.constant(k1), Shape{1, V}));
  for (int64_t v = 0; v < V; ++v) EXPECT_NEAR(one.value().data()[v], ref.value().data()[v], 1e-6);
}

TEST(HardMarginal, Gradients) {
  const int64_t B = 2, S = 4, V = 5;
  Rng rng(9);
  Tensor base = testing::random_tensor(Shape{B, V}, rng);
  Tensor keys = testing::random_tensor(Shape{B, S, V}, rng);
  Tensor energies = testing::random_tensor(Shape{B, S}, rng);
  Tensor mask = Tensor::zeros(Shape{B, S});
  mask.data()[1 * S + 3] = -std::numeric_limits<float>::infinity();  // padding
  // through log_softmax, so that log_alpha stays a log-distribution under the perturbations
  testing::expect_gradients(
      [&](Graph&, std::vector<Var>& x) {
        return hard_marginal(x[0], x[1], log_softmax(x[2], mask));
      },
      {base, keys, energies}, {.eps = 1e-3f, .rtol = 1e-2f, .atol = 1e-4f});
}

}  // namespace
}  // namespace heed
