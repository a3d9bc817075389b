// Location-aware attention (Chorowski et al. 2015): two steps against eqs. 8-9 computed by hand in
// double (the convolution of the previous alignment, the energies, the softmax with sharpening,
// the smoothed normalisation, alpha_0 uniform, padding frames with no weight); the window keeps
// every frame farther than w from the previous alignment's median at zero; and two steps' outputs
// (the second reading the first's alignment through F and U) match finite differences for the
// query, the annotations and every parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/nn/attention/attention.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

constexpr int64_t B = 2, S = 7, Dq = 4, Dm = 3, A = 5, K = 2, R = 3;
const std::vector<int32_t> kLengths = {7, 4};

struct Rig {
  ParameterStore store;
  Rng rng{23};
  std::unique_ptr<Attention> attn;
  explicit Rig(LocationAttentionConfig o) {
    o.filters = K;
    o.width = R;
    attn = make_attention({.kind = AttentionKind::Location,
                           .query_dim = Dq,
                           .memory_dim = Dm,
                           .attn_dim = A,
                           .location = o},
                          Scope(store, rng, "attn"));
  }
  const float* p(const char* name) { return store.get(std::string("attn/") + name).value.data(); }
};

// One step of eqs. 8-9 in double: prev [B][S] -> alpha [B][S], context [B][Dm]
struct Step {
  std::vector<std::vector<double>> alpha, context;
};
Step by_hand(Rig& r, const LocationAttentionConfig& o, const std::vector<std::vector<double>>& prev,
             const float* q, const float* h) {
  const float *W = r.p("W"), *V = r.p("V"), *b = r.p("b"), *F = r.p("F"), *U = r.p("U"),
              *w = r.p("w");
  Step out;
  for (int64_t n = 0; n < B; ++n) {
    const int64_t len = kLengths[static_cast<size_t>(n)];
    std::vector<double> e(static_cast<size_t>(S), 0.0);
    for (int64_t j = 0; j < len; ++j) {
      double sum = 0;
      for (int64_t a = 0; a < A; ++a) {
        double x = b[a];
        for (int64_t d = 0; d < Dq; ++d) x += W[a * Dq + d] * q[n * Dq + d];
        for (int64_t d = 0; d < Dm; ++d) x += V[a * Dm + d] * h[(n * S + j) * Dm + d];
        for (int64_t k = 0; k < K; ++k) {
          double f = 0;  // f_ijk = sum_t F[k, t] alpha_{i-1, j + t - (R - 1) / 2}
          for (int64_t t = 0; t < R; ++t) {
            const int64_t u = j + t - (R - 1) / 2;
            if (u >= 0 && u < len)
              f += F[k * R + t] * prev[static_cast<size_t>(n)][static_cast<size_t>(u)];
          }
          x += U[a * K + k] * f;
        }
        sum += w[a] * std::tanh(x);
      }
      e[static_cast<size_t>(j)] = sum;
    }
    std::vector<double> alpha(static_cast<size_t>(S), 0.0);
    double z = 0;
    for (int64_t j = 0; j < len; ++j) {
      const double v = o.smooth ? 1 / (1 + std::exp(-e[static_cast<size_t>(j)]))
                                : std::exp(o.sharpen * e[static_cast<size_t>(j)]);
      alpha[static_cast<size_t>(j)] = v;
      z += v;
    }
    std::vector<double> c(static_cast<size_t>(Dm), 0.0);
    for (int64_t j = 0; j < len; ++j) {
      alpha[static_cast<size_t>(j)] /= z;
      for (int64_t d = 0; d < Dm; ++d)
        c[static_cast<size_t>(d)] += alpha[static_cast<size_t>(j)] * h[(n * S + j) * Dm + d];
    }
    out.alpha.push_back(alpha);
    out.context.push_back(c);
  }
  return out;
}

TEST(LocationAttention, TwoStepsAreEquationsEightAndNine) {
  for (const LocationAttentionConfig o :
       {LocationAttentionConfig{}, LocationAttentionConfig{.sharpen = 2.f},
        LocationAttentionConfig{.smooth = true}}) {
    Rig r(o);
    Rng rng(5);
    const Tensor h = testing::random_tensor({B, S, Dm}, rng);
    const Tensor q1 = testing::random_tensor({B, Dq}, rng),
                 q2 = testing::random_tensor({B, Dq}, rng);
    Graph g(Mode::Inference);
    AttentionState st = r.attn->start(g, {g.constant(h), padding_mask(kLengths, S, g), kLengths});
    const Attended a1 = r.attn->attend(g, g.constant(q1), st);
    const Attended a2 = r.attn->attend(g, g.constant(q2), st);
    std::vector<std::vector<double>> uniform(B, std::vector<double>(S, 0.0));
    for (int64_t n = 0; n < B; ++n)
      for (int64_t j = 0; j < kLengths[static_cast<size_t>(n)]; ++j)
        uniform[static_cast<size_t>(n)][static_cast<size_t>(j)] =
            1.0 / kLengths[static_cast<size_t>(n)];
    const Step s1 = by_hand(r, o, uniform, q1.data(), h.data());
    const Step s2 = by_hand(r, o, s1.alpha, q2.data(), h.data());
    for (const auto& [got, want] : {std::pair{a1, s1}, std::pair{a2, s2}})
      for (int64_t n = 0; n < B; ++n) {
        for (int64_t j = 0; j < S; ++j)
          EXPECT_NEAR(got.weights.value().data()[n * S + j],
                      want.alpha[static_cast<size_t>(n)][static_cast<size_t>(j)], 1e-5)
              << "sharpen " << o.sharpen << " smooth " << o.smooth;
        for (int64_t d = 0; d < Dm; ++d)
          EXPECT_NEAR(got.context.value().data()[n * Dm + d],
                      want.context[static_cast<size_t>(n)][static_cast<size_t>(d)], 1e-5);
      }
  }
}

TEST(LocationAttention, TheWindowKeepsFarFramesAtZero) {
  Rig r({.window = 1});
  Rng rng(6);
  const Tensor h = testing::random_tensor({B, S, Dm}, rng);
  Graph g(Mode::Inference);
  AttentionState st = r.attn->start(g, {g.constant(h), padding_mask(kLengths, S, g), kLengths});
  // alpha_{i-1} concentrated on frame 5 of row 0 and frame 1 of row 1: medians 5 and 1
  Tensor prev = g.alloc(Shape{B, S});
  prev.fill(0.f);
  prev.data()[5] = 1.f;
  prev.data()[S + 1] = 1.f;
  st.previous = g.constant(prev);
  const Attended a = r.attn->attend(g, g.constant(testing::random_tensor({B, Dq}, rng)), st);
  for (int64_t j = 0; j < S; ++j) {
    EXPECT_EQ(a.weights.value().data()[j] > 0.f, j >= 4 && j <= 6) << j;
    EXPECT_EQ(a.weights.value().data()[S + j] > 0.f, j <= 2) << j;
  }
}

TEST(LocationAttention, TwoStepGradientsMatchFiniteDifferences) {
  Rig r({.sharpen = 1.5f});
  Rng rng(7);
  std::vector<Parameter*> params(r.store.all().begin(), r.store.all().end());
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>& x) {
        AttentionState st = r.attn->start(g, {x[2], padding_mask(kLengths, S, g), kLengths});
        const Attended a1 = r.attn->attend(g, x[0], st);
        const Attended a2 = r.attn->attend(g, x[1], st);
        return concat({a1.context, a2.context, a2.weights}, 1);
      },
      {testing::random_tensor({B, Dq}, rng), testing::random_tensor({B, Dq}, rng),
       testing::random_tensor({B, S, Dm}, rng)},
      {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 24}, {}, params);
}

}  // namespace
}  // namespace heed
