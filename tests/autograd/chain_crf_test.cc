// Segmentation attention's marginals (Kim et al. 2017, section 3.2) against brute-force
// enumeration of every assignment z in {0, 1}^n for n up to 8: the marginals, and their
// gradients against the exact second moments (dL/dtheta_k = sum_j g_j Cov(z_j, z_k)); rows of
// several lengths in one batch (padding: 0, and no gradient); finite differences; no NaN on a
// row of 3,000 positions with potentials of +-50.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

struct Enumerated {
  std::vector<double> mu;                   // [n] p(z_j = 1)
  std::vector<std::vector<double>> second;  // [n][n] E[z_j z_k]
  std::vector<std::vector<double>> edges;   // [n][4] E[z_j N_sq], N_sq: edges s -> q of z
  std::vector<double> edges_mean;           // [4] E[N_sq]
};

// p(z) proportional to exp(sum_j theta_j z_j + sum_j A[z_j][z_j+1]), over all 2^n assignments.
Enumerated enumerate(const std::vector<float>& theta, const float* A) {
  const size_t n = theta.size();
  Enumerated e{
      std::vector<double>(n, 0), std::vector<std::vector<double>>(n, std::vector<double>(n, 0)),
      std::vector<std::vector<double>>(n, std::vector<double>(4, 0)), std::vector<double>(4, 0)};
  double Z = 0;
  for (uint32_t z = 0; z < (1u << n); ++z) {
    auto bit = [&](size_t j) { return static_cast<int>((z >> j) & 1u); };
    double score = 0;
    std::vector<double> count(4, 0);
    for (size_t j = 0; j < n; ++j) {
      score += bit(j) * theta[j];
      if (j + 1 < n) {
        score += A[bit(j) * 2 + bit(j + 1)];
        count[static_cast<size_t>(bit(j) * 2 + bit(j + 1))] += 1;
      }
    }
    const double p = std::exp(score);
    Z += p;
    for (size_t j = 0; j < n; ++j) {
      e.mu[j] += p * bit(j);
      for (size_t k = 0; k < n; ++k) e.second[j][k] += p * bit(j) * bit(k);
      for (size_t q = 0; q < 4; ++q) e.edges[j][q] += p * bit(j) * count[q];
    }
    for (size_t q = 0; q < 4; ++q) e.edges_mean[q] += p * count[q];
  }
  for (size_t j = 0; j < n; ++j) {
    e.mu[j] /= Z;
    for (auto& v : e.second[j]) v /= Z;
    for (auto& v : e.edges[j]) v /= Z;
  }
  for (auto& v : e.edges_mean) v /= Z;
  return e;
}

TEST(ChainCrf, MarginalsAndGradientsEqualEnumeration) {
  Rng rng(7);
  const int64_t B = 6, S = 8;
  const std::vector<int32_t> lengths = {8, 1, 5, 0, 7, 3};
  Tensor theta = testing::random_tensor({B, S}, rng, -3.f, 3.f);
  Tensor A = testing::random_tensor({2, 2}, rng, -2.f, 2.f);
  Tensor g = testing::random_tensor({B, S}, rng);  // dL/dmu
  Graph G(Mode::Train, 1);
  Var th = G.variable(theta), pw = G.variable(A);
  Var mu = chain_crf_marginals(th, pw, lengths);
  G.backward(sum_all(mul(mu, G.constant(g))));
  std::vector<double> dA(4, 0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = lengths[static_cast<size_t>(b)];
    std::vector<float> row(theta.data() + b * S, theta.data() + b * S + n);
    const Enumerated e = enumerate(row, A.data());
    for (int64_t j = 0; j < S; ++j) {
      const float got = mu.value().data()[b * S + j];
      if (j >= n) {
        EXPECT_EQ(got, 0.f) << "padding, row " << b;
        EXPECT_EQ(th.grad().data()[b * S + j], 0.f) << "padding's gradient, row " << b;
        continue;
      }
      EXPECT_NEAR(got, e.mu[static_cast<size_t>(j)], 1e-6) << "row " << b << " position " << j;
      double want = 0;  // dL/dtheta_j = sum_k g_k (E[z_k z_j] - mu_k mu_j)
      for (int64_t k = 0; k < n; ++k)
        want += g.data()[b * S + k] * (e.second[static_cast<size_t>(k)][static_cast<size_t>(j)] -
                                       e.mu[static_cast<size_t>(k)] * e.mu[static_cast<size_t>(j)]);
      EXPECT_NEAR(th.grad().data()[b * S + j], want, 1e-5) << "row " << b << " position " << j;
    }
    for (int64_t k = 0; k < n; ++k)  // dL/dA_sq = sum_k g_k (E[z_k N_sq] - mu_k E[N_sq])
      for (size_t q = 0; q < 4; ++q)
        dA[q] += g.data()[b * S + k] * (e.edges[static_cast<size_t>(k)][q] -
                                        e.mu[static_cast<size_t>(k)] * e.edges_mean[q]);
  }
  for (size_t q = 0; q < 4; ++q) EXPECT_NEAR(pw.grad().data()[q], dA[q], 1e-5) << "A entry " << q;
}

TEST(ChainCrf, GradientsMatchFiniteDifferences) {
  Rng rng(3);
  const std::vector<int32_t> lengths = {5, 3, 4};
  testing::expect_gradients(
      [&](Graph&, std::vector<Var>& x) { return chain_crf_marginals(x[0], x[1], lengths); },
      {testing::random_tensor({3, 5}, rng, -2.f, 2.f), testing::random_tensor({2, 2}, rng)},
      {.eps = 1e-2f, .rtol = 1e-2f, .atol = 1e-4f});
}

TEST(ChainCrf, LongRowsWithExtremePotentialsStayFinite) {
  Rng rng(11);
  const int64_t S = 3000;
  Tensor theta = testing::random_tensor({1, S}, rng, -50.f, 50.f);
  Tensor A = Tensor::from({2, 2}, std::vector<float>{30.f, -30.f, -30.f, 30.f});
  Graph G(Mode::Train, 1);
  Var th = G.variable(theta), pw = G.variable(A);
  const std::vector<int32_t> lengths = {static_cast<int32_t>(S)};
  Var mu = chain_crf_marginals(th, pw, lengths);
  G.backward(sum_all(mu));
  for (int64_t j = 0; j < S; ++j) {
    const float m = mu.value().data()[j];
    ASSERT_TRUE(m >= 0.f && m <= 1.f + 1e-6f) << j << ": " << m;
    ASSERT_TRUE(std::isfinite(th.grad().data()[j])) << j;
  }
  for (int q = 0; q < 4; ++q) EXPECT_TRUE(std::isfinite(pw.grad().data()[q]));
}

TEST(ChainCrf, BadShapesAreErrors) {
  Graph G(Mode::Train, 1);
  Var th = G.variable(Tensor::zeros({2, 3})), pw = G.variable(Tensor::zeros({2, 2}));
  const std::vector<int32_t> one = {3}, too_long = {3, 4};
  EXPECT_THROW(chain_crf_marginals(th, pw, one), Error);
  EXPECT_THROW(chain_crf_marginals(th, pw, too_long), Error);
  EXPECT_THROW(chain_crf_marginals(th, G.variable(Tensor::zeros({3, 3})), one), Error);
}

}  // namespace
}  // namespace heed
