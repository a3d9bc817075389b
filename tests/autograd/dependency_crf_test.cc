// Syntactic attention's marginals (Kim et al. 2017, section 3.3) against brute-force enumeration
// of every projective dependency tree rooted at node 0 for sentences of up to 5 words: the
// number of trees (C(3n, n) / (2n + 1): 1, 3, 12, 55, 273), log Z, the arc marginals and their
// gradients against the exact covariances of the arc indicators; padding; finite differences;
// long rows with large scores stay finite.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/kernels/dependency_crf.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// parent[m] for m in 1..n (parent[0] unused): a tree rooted at 0 with no crossing arcs?
bool projective_tree(const std::vector<int>& parent, int n) {
  for (int m = 1; m <= n; ++m) {  // every word reaches the root
    int v = m;
    for (int steps = 0; v != 0; ++steps) {
      if (steps > n) return false;  // a cycle
      v = parent[static_cast<size_t>(v)];
    }
  }
  auto descends = [&](int v, int h) {  // v below h (or v == h)
    for (; v != 0; v = parent[static_cast<size_t>(v)])
      if (v == h) return true;
    return h == 0;
  };
  for (int m = 1; m <= n; ++m) {  // each word between a head and its modifier is under the head
    const int h = parent[static_cast<size_t>(m)];
    for (int v = std::min(h, m) + 1; v < std::max(h, m); ++v)
      if (!descends(v, h)) return false;
  }
  return true;
}

struct Enumerated {
  int64_t trees = 0;
  double logZ = 0;
  std::vector<double> mu;                   // [(n + 1) * n]: arc (h, m) at h * n + m - 1
  std::vector<std::vector<double>> second;  // E[z_a z_b] over arcs
};

// theta(h -> m) at theta[h * S + m - 1]
Enumerated enumerate(const float* theta, int64_t S, int n) {
  const size_t arcs = static_cast<size_t>((n + 1) * n);
  Enumerated e{0, 0, std::vector<double>(arcs, 0),
               std::vector<std::vector<double>>(arcs, std::vector<double>(arcs, 0))};
  std::vector<int> parent(static_cast<size_t>(n + 1), 0);
  double Z = 0;
  int64_t total = 1;
  for (int m = 0; m < n; ++m) total *= n + 1;
  for (int64_t code = 0; code < total; ++code) {
    int64_t c = code;
    bool self = false;
    for (int m = 1; m <= n; ++m) {
      parent[static_cast<size_t>(m)] = static_cast<int>(c % (n + 1));
      c /= n + 1;
      self = self || parent[static_cast<size_t>(m)] == m;
    }
    if (self || !projective_tree(parent, n)) continue;
    ++e.trees;
    double score = 0;
    std::vector<size_t> on;
    for (int m = 1; m <= n; ++m) {
      const int h = parent[static_cast<size_t>(m)];
      score += theta[h * S + m - 1];
      on.push_back(static_cast<size_t>(h * n + m - 1));
    }
    const double p = std::exp(score);
    Z += p;
    for (size_t a : on) {
      e.mu[a] += p;
      for (size_t b : on) e.second[a][b] += p;
    }
  }
  for (auto& v : e.mu) v /= Z;
  for (auto& row : e.second)
    for (auto& v : row) v /= Z;
  e.logZ = std::log(Z);
  return e;
}

TEST(DependencyCrf, CountsTheProjectiveTrees) {
  const std::vector<int64_t> want = {1, 3, 12, 55, 273};
  for (int n = 1; n <= 5; ++n) {
    const std::vector<float> zeros(static_cast<size_t>((n + 1) * n), 0.f);
    const Enumerated e = enumerate(zeros.data(), n, n);
    EXPECT_EQ(e.trees, want[static_cast<size_t>(n - 1)]) << n << " words";
    // with every score 0, log Z is the log of the number of trees: the inside pass counts them
    std::vector<float> mu_k(zeros.size());
    std::vector<double> saved(static_cast<size_t>(kernels::dependency_crf_saved(n)));
    double logZ = 0;
    const int32_t len = n;
    kernels::dependency_crf_forward(1, n, zeros.data(), &len, mu_k.data(), &logZ, saved.data());
    EXPECT_NEAR(std::exp(logZ), static_cast<double>(e.trees), 1e-9 * e.trees) << n << " words";
    Graph G(Mode::Train, 1);
    const std::vector<int32_t> lengths = {n};
    Var mu = dependency_marginals(G.variable(Tensor::zeros({1, n + 1, n})), lengths);
    for (int m = 1; m <= n; ++m) {  // each column a distribution over the parent
      double column = 0;
      for (int h = 0; h <= n; ++h) column += mu.value().data()[h * n + m - 1];
      EXPECT_NEAR(column, 1.0, 1e-6) << n << " words, word " << m;
    }
  }
}

TEST(DependencyCrf, MarginalsAndGradientsEqualEnumeration) {
  Rng rng(5);
  const int64_t B = 6, S = 5, N = S + 1;
  const std::vector<int32_t> lengths = {5, 1, 3, 0, 4, 2};
  Tensor theta = testing::random_tensor({B, N, S}, rng, -3.f, 3.f);
  Tensor g = testing::random_tensor({B, N, S}, rng);  // dL/dmu
  Graph G(Mode::Train, 1);
  Var th = G.variable(theta);
  Var mu = dependency_marginals(th, lengths);
  G.backward(sum_all(mul(mu, G.constant(g))));
  for (int64_t b = 0; b < B; ++b) {
    const int n = lengths[static_cast<size_t>(b)];
    // the row's scores re-laid as [n + 1, n]
    std::vector<float> row(static_cast<size_t>((n + 1) * std::max(n, 1)), 0.f);
    for (int h = 0; h <= n; ++h)
      for (int m = 1; m <= n; ++m)
        row[static_cast<size_t>(h * n + m - 1)] = theta.data()[(b * N + h) * S + m - 1];
    const Enumerated e = n > 0 ? enumerate(row.data(), n, n) : Enumerated{};
    for (int64_t h = 0; h < N; ++h)
      for (int64_t m = 1; m <= S; ++m) {
        const int64_t at = (b * N + h) * S + m - 1;
        const float got = mu.value().data()[at];
        if (h > n || m > n || h == m) {
          EXPECT_EQ(got, 0.f) << "row " << b << " arc " << h << " -> " << m;
          EXPECT_EQ(th.grad().data()[at], 0.f) << "row " << b << " arc " << h << " -> " << m;
          continue;
        }
        const size_t a = static_cast<size_t>(h * n + m - 1);
        EXPECT_NEAR(got, e.mu[a], 1e-6) << "row " << b << " arc " << h << " -> " << m;
        double want = 0;  // dL/dtheta_a = sum_c g_c (E[z_c z_a] - mu_c mu_a)
        for (int hc = 0; hc <= n; ++hc)
          for (int mc = 1; mc <= n; ++mc) {
            const size_t c = static_cast<size_t>(hc * n + mc - 1);
            want += g.data()[(b * N + hc) * S + mc - 1] * (e.second[c][a] - e.mu[c] * e.mu[a]);
          }
        EXPECT_NEAR(th.grad().data()[at], want, 1e-5) << "row " << b << " arc " << h << " -> " << m;
      }
  }
}

TEST(DependencyCrf, GradientsMatchFiniteDifferences) {
  Rng rng(9);
  const std::vector<int32_t> lengths = {4, 2, 3};
  testing::expect_gradients(
      [&](Graph&, std::vector<Var>& x) { return dependency_marginals(x[0], lengths); },
      {testing::random_tensor({3, 5, 4}, rng, -2.f, 2.f)},
      {.eps = 1e-2f, .rtol = 1e-2f, .atol = 1e-4f});
}

TEST(DependencyCrf, LongRowsWithLargeScoresStayFinite) {
  Rng rng(13);
  const int64_t S = 120;
  Tensor theta = testing::random_tensor({1, S + 1, S}, rng, -40.f, 40.f);
  Graph G(Mode::Train, 1);
  const std::vector<int32_t> lengths = {static_cast<int32_t>(S)};
  Var th = G.variable(theta);
  Var mu = dependency_marginals(th, lengths);
  G.backward(sum_all(mul(mu, G.constant(testing::random_tensor({1, S + 1, S}, rng)))));
  for (int64_t m = 0; m < S; ++m) {
    double column = 0;
    for (int64_t h = 0; h <= S; ++h) {
      const float p = mu.value().data()[h * S + m];
      ASSERT_TRUE(p >= 0.f && p <= 1.f + 1e-5f) << h << " -> " << m + 1 << ": " << p;
      ASSERT_TRUE(std::isfinite(th.grad().data()[h * S + m]));
      column += p;
    }
    EXPECT_NEAR(column, 1.0, 1e-4) << "word " << m + 1;
  }
}

TEST(DependencyCrf, BadShapesAreErrors) {
  Graph G(Mode::Train, 1);
  Var th = G.variable(Tensor::zeros({2, 4, 3}));
  const std::vector<int32_t> one = {3}, too_long = {3, 4};
  EXPECT_THROW(dependency_marginals(th, one), Error);
  EXPECT_THROW(dependency_marginals(th, too_long), Error);
  EXPECT_THROW(dependency_marginals(G.variable(Tensor::zeros({2, 3, 3})), one), Error);
}

}  // namespace
}  // namespace heed
