// Monotonic attention's expectations against their definitions: the expected alignment
// (Raffel et al. 2017) against the paper's closed form, its recursive definition and the sum
// over every place the previous step could have stopped, including p near 0 and 1; its mass
// never above 1, no NaN on sources of 2,000 entries, the hard path when p is 0 or 1; MoChA's
// chunkwise weights (Chiu & Raffel 2018) against their double sum; finite-difference gradients
// of both.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "heed/autograd/ops.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

using Row = std::vector<long double>;

// alpha_ij = sum_{k<=j} alpha_{i-1,k} prod_{l=k}^{j-1} (1 - p_il) p_ij: the decoder stopped at k
// at step i - 1, skipped k..j-1 and stops at j (Raffel et al. 2017, eq. 9).
Row by_definition(const Row& p, const Row& prev) {
  Row a(p.size(), 0);
  for (size_t j = 0; j < p.size(); ++j)
    for (size_t k = 0; k <= j; ++k) {
      long double path = prev[k];
      for (size_t l = k; l < j; ++l) path *= 1 - p[l];
      a[j] += path * p[j];
    }
  return a;
}

// alpha_i = p_i (.) cumprod_excl(1 - p_i) (.) cumsum(alpha_{i-1} / cumprod_excl(1 - p_i)) (eq. 12)
Row closed_form(const Row& p, const Row& prev) {
  Row a(p.size()), cp(p.size());
  long double prod = 1, sum = 0;
  for (size_t j = 0; j < p.size(); ++j) {
    cp[j] = prod;
    prod *= 1 - p[j];
  }
  for (size_t j = 0; j < p.size(); ++j) {
    sum += prev[j] / cp[j];
    a[j] = p[j] * cp[j] * sum;
  }
  return a;
}

// alpha_ij = p_ij ((1 - p_i,j-1) alpha_i,j-1 / p_i,j-1 + alpha_i-1,j) (eq. 11)
Row recursive(const Row& p, const Row& prev) {
  Row a(p.size());
  for (size_t j = 0; j < p.size(); ++j)
    a[j] = p[j] * ((j > 0 ? (1 - p[j - 1]) * a[j - 1] / p[j - 1] : 0) + prev[j]);
  return a;
}

// B rows of S stopping probabilities, a third of them within 1e-4 of 0 or of 1; the previous
// alignments random distributions over the row.
struct Step {
  int64_t B, S;
  Tensor p, prev;
};

Step random_step(int64_t B, int64_t S, uint64_t seed, bool extremes) {
  Rng rng(seed);
  Step s{B, S, Tensor::empty(Shape{B, S}), Tensor::empty(Shape{B, S})};
  for (int64_t b = 0; b < B; ++b) {
    double total = 0;
    for (int64_t j = 0; j < S; ++j) {
      float v = rng.uniform(0.02f, 0.98f);
      const float pick = rng.uniform(0.f, 1.f);
      if (extremes && pick < 1.f / 6) v = rng.uniform(1e-6f, 1e-4f);
      if (extremes && pick > 5.f / 6) v = 1.f - rng.uniform(1e-6f, 1e-4f);
      s.p.data()[b * S + j] = v;
      s.prev.data()[b * S + j] = rng.uniform(0.f, 1.f);
      total += s.prev.data()[b * S + j];
    }
    for (int64_t j = 0; j < S; ++j)
      s.prev.data()[b * S + j] = static_cast<float>(s.prev.data()[b * S + j] / total);
  }
  return s;
}

Row row_of(const Tensor& t, int64_t b, int64_t S) {
  return Row(t.data() + b * S, t.data() + (b + 1) * S);
}

TEST(MonotonicAlignment, EqualsTheClosedFormTheRecursionAndTheDefinition) {
  for (bool extremes : {false, true}) {
    const Step s = random_step(6, 11, extremes ? 2 : 1, extremes);
    Graph g(Mode::Inference);
    Var a = monotonic_alignment(g.constant(s.p), g.constant(s.prev));
    for (int64_t b = 0; b < s.B; ++b) {
      const Row p = row_of(s.p, b, s.S), prev = row_of(s.prev, b, s.S);
      const Row want = by_definition(p, prev), cf = closed_form(p, prev), rec = recursive(p, prev);
      for (int64_t j = 0; j < s.S; ++j) {
        SCOPED_TRACE(::testing::Message() << "extremes " << extremes << " row " << b << " j " << j);
        EXPECT_NEAR(cf[j], want[j], 1e-9);
        EXPECT_NEAR(rec[j], want[j], 1e-9);
        EXPECT_NEAR(a.value().data()[b * s.S + j], want[j], 1e-6);
      }
    }
  }
}

// Where the closed form's cumprod underflows (p near 1 over 2,000 entries), the recursion
// stays finite, non-negative, and its mass at most the previous step's; chained over steps.
TEST(MonotonicAlignment, LongSourcesStayFiniteWithMassAtMostOne) {
  const int64_t S = 2000;
  Step s = random_step(3, S, 3, true);
  Graph g(Mode::Inference);
  Var prev = g.constant(s.prev);
  double last = 1;
  for (int step = 0; step < 20; ++step) {
    Var a = monotonic_alignment(g.constant(s.p), prev);
    for (int64_t b = 0; b < s.B; ++b) {
      double mass = 0;
      for (int64_t j = 0; j < S; ++j) {
        const float v = a.value().data()[b * S + j];
        ASSERT_TRUE(std::isfinite(v) && v >= 0.f) << "step " << step << " row " << b << " j " << j;
        mass += v;
      }
      EXPECT_LE(mass, 1.0 + 1e-5) << "step " << step;
      if (b == 0) {
        EXPECT_LE(mass, last + 1e-6);
        last = mass;
      }
    }
    prev = a;
  }
  // the closed form in float (what other implementations compute) does break here
  const Row p = row_of(s.p, 0, S);
  float cp = 1.f;
  for (int64_t j = 0; j < S; ++j) cp *= 1.f - static_cast<float>(p[j]);
  EXPECT_EQ(cp, 0.f) << "the case should underflow a float cumprod";
}

// With p in {0, 1} the expectation is the hard path: from where step i - 1 stopped, the first
// entry with p = 1; entries before it are never attended, even those with p = 1.
TEST(MonotonicAlignment, ZeroOneProbabilitiesGiveTheHardPath) {
  const int64_t S = 7;
  Graph g(Mode::Inference);
  Tensor prev = Tensor::empty(Shape{1, S}), p = Tensor::empty(Shape{1, S});
  const float ps[S] = {1, 0, 0, 0, 1, 0, 1};
  for (int64_t j = 0; j < S; ++j) {
    prev.data()[j] = j == 2 ? 1.f : 0.f;  // stopped at 2
    p.data()[j] = ps[j];
  }
  Var a = monotonic_alignment(g.constant(p), g.constant(prev));
  for (int64_t j = 0; j < S; ++j) EXPECT_EQ(a.value().data()[j], j == 4 ? 1.f : 0.f) << j;
  // none at or after the previous stop: nothing is attended (the context is zero)
  for (int64_t j = 0; j < S; ++j) p.data()[j] = j < 2 ? 1.f : 0.f;
  Var none = monotonic_alignment(g.constant(p), g.constant(prev));
  for (int64_t j = 0; j < S; ++j) EXPECT_EQ(none.value().data()[j], 0.f) << j;
}

TEST(MonotonicAlignment, GradientMatchesFiniteDifferences) {
  const Step s = random_step(3, 9, 4, false);
  testing::expect_gradients(
      [](Graph&, std::vector<Var>& x) { return monotonic_alignment(x[0], x[1]); }, {s.p, s.prev},
      {.eps = 1e-3f, .rtol = 1e-2f, .atol = 1e-4f, .max_entries = 64});
  // chained over three steps, as a decoder uses it
  testing::expect_gradients(
      [](Graph&, std::vector<Var>& x) {
        Var a = x[1];
        for (int i = 0; i < 3; ++i) a = monotonic_alignment(x[0], a);
        return a;
      },
      {s.p, s.prev}, {.eps = 1e-3f, .rtol = 1e-2f, .atol = 1e-4f, .max_entries = 64});
}

// The all-steps op (monotonic multihead attention's, teacher-forced) is the one-step op chained
// from alpha_{-1} = delta_{j,0}, row by row, and has the same gradients.
TEST(MonotonicAlignments, EqualTheOneStepOpChainedOverTheSteps) {
  const int64_t R = 3, T = 5, S = 8;
  Rng rng(7);
  Tensor p = Tensor::empty(Shape{R, T, S});
  for (float& v : p.span())
    v = rng.uniform(0.f, 1.f) < 0.2f ? 1.f - rng.uniform(1e-6f, 1e-4f) : rng.uniform(0.02f, 0.98f);
  Graph g(Mode::Inference);
  Var all = monotonic_alignments(g.constant(p));
  Var pv = g.constant(p);
  Tensor start = Tensor::zeros(Shape{R, S});
  for (int64_t r = 0; r < R; ++r) start.data()[r * S] = 1.f;
  Var prev = g.constant(start);
  for (int64_t i = 0; i < T; ++i) {
    Var a = monotonic_alignment(reshape(select(pv, 1, i), Shape{R, S}), prev);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0; j < S; ++j)
        EXPECT_EQ(all.value().data()[(r * T + i) * S + j], a.value().data()[r * S + j])
            << "row " << r << " step " << i << " entry " << j;
    prev = a;
  }
  testing::expect_gradients([](Graph&, std::vector<Var>& x) { return monotonic_alignments(x[0]); },
                            {p}, {.eps = 1e-3f, .rtol = 1e-2f, .atol = 1e-4f, .max_entries = 96});
}

// beta_ij = sum_{k=j}^{j+w-1} alpha_ik exp(u_ij) / sum_{l=k-w+1}^{k} exp(u_il) (Chiu & Raffel
// 2018, eq. 20), each sum taken as written
Row mocha_by_definition(const Row& alpha, const Row& u, int64_t w) {
  const auto S = static_cast<int64_t>(alpha.size());
  Row beta(alpha.size(), 0);
  for (int64_t j = 0; j < S; ++j)
    for (int64_t k = j; k < std::min(S, j + w); ++k) {
      long double d = 0;
      for (int64_t l = std::max<int64_t>(0, k - w + 1); l <= k; ++l) d += std::exp(u[l]);
      beta[j] += alpha[k] * std::exp(u[j]) / d;
    }
  return beta;
}

TEST(MochaChunk, EqualsItsDefinitionAndKeepsTheMass) {
  const int64_t B = 3, S = 10;
  Rng rng(5);
  Tensor alpha = testing::random_tensor(Shape{B, S}, rng, 0.f, 0.2f);
  Tensor u = testing::random_tensor(Shape{B, S}, rng, -3.f, 3.f);
  for (int64_t w : {1, 2, 3, 4, 10, 12}) {
    Graph g(Mode::Inference);
    Var beta = mocha_chunk(g.constant(alpha), g.constant(u), w);
    for (int64_t b = 0; b < B; ++b) {
      const Row want = mocha_by_definition(row_of(alpha, b, S), row_of(u, b, S), w);
      double mass_a = 0, mass_b = 0;
      for (int64_t j = 0; j < S; ++j) {
        EXPECT_NEAR(beta.value().data()[b * S + j], want[j], 1e-6) << "w " << w << " j " << j;
        if (w == 1) {
          EXPECT_FLOAT_EQ(beta.value().data()[b * S + j], alpha.data()[b * S + j]);
        }
        mass_a += alpha.data()[b * S + j];
        mass_b += beta.value().data()[b * S + j];
      }
      EXPECT_NEAR(mass_b, mass_a, 1e-5) << "w " << w;  // each alpha_k is spread over its chunk
    }
  }
}

// Padding (u = -inf, alpha = 0) gets no weight, and the real entries what they get without it.
TEST(MochaChunk, PaddingGetsNothing) {
  const int64_t S = 8, real = 5, w = 3;
  Rng rng(6);
  Tensor alpha = testing::random_tensor(Shape{1, S}, rng, 0.f, 0.2f);
  Tensor u = testing::random_tensor(Shape{1, S}, rng, -3.f, 3.f);
  for (int64_t j = real; j < S; ++j) {
    alpha.data()[j] = 0.f;
    u.data()[j] = -std::numeric_limits<float>::infinity();
  }
  Graph g(Mode::Inference);
  Var beta = mocha_chunk(g.constant(alpha), g.constant(u), w);
  const Row want = mocha_by_definition(row_of(alpha, 0, real), row_of(u, 0, real), w);
  for (int64_t j = 0; j < S; ++j)
    EXPECT_NEAR(beta.value().data()[j], j < real ? static_cast<double>(want[j]) : 0.0, 1e-6) << j;
}

TEST(MochaChunk, GradientMatchesFiniteDifferences) {
  Rng rng(7);
  const Tensor alpha = testing::random_tensor(Shape{2, 9}, rng, 0.f, 0.3f);
  const Tensor u = testing::random_tensor(Shape{2, 9}, rng, -2.f, 2.f);
  for (int64_t w : {1, 3, 4}) {
    SCOPED_TRACE(w);
    testing::expect_gradients(
        [w](Graph&, std::vector<Var>& x) { return mocha_chunk(x[0], x[1], w); }, {alpha, u},
        {.eps = 1e-3f, .rtol = 1e-2f, .atol = 1e-4f, .max_entries = 64});
  }
}

}  // namespace
}  // namespace heed
