// Hard attention's step against its definitions: decoding attends to the argmax of the soft
// mechanism it scores with (one-hot weights, the context that one annotation), and samples in
// proportion to alpha with --hard-sample; exact training returns alpha and log alpha;
// REINFORCE's estimate (the mechanism's log alpha_j of the sample, through nn/reinforce.h) is
// unbiased: over many samples its mean is the exact gradient of the expected loss within the
// standard error; straight-through Gumbel-softmax at a high temperature has the gradients of
// soft attention at that temperature, and not at a low one.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/nn/attention/attention.h"
#include "heed/nn/reinforce.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

constexpr int64_t B = 3, S = 5, D = 6, A = 4;
const std::vector<int32_t> kLengths = {5, 3, 2};

// A hard mechanism and the soft one it scores with, on copies of the same parameters (their
// gradients in store and soft_store).
struct Rig {
  ParameterStore store, soft_store;
  std::unique_ptr<Attention> hard, soft;
  Tensor query, memory;
  explicit Rig(HardAttentionConfig h) {
    Rng rng(17);
    const AttentionConfig c{
        .kind = AttentionKind::Hard, .query_dim = D, .memory_dim = D, .attn_dim = A, .hard = h};
    hard = make_attention(c, Scope(store, rng, "attn"));
    AttentionConfig sc = c;
    sc.kind = h.score;
    soft = make_attention(sc, Scope(soft_store, rng, "attn"));
    for (Parameter* p : soft_store.all()) p->value = store.get(p->name).value.clone();
    Rng data(5);
    query = testing::random_tensor({B, D}, data, -2.f, 2.f);
    memory = testing::random_tensor({B, S, D}, data);
  }
  Attended step(Attention& a, Graph& g, Var q, Var m) const {
    AttentionState st = a.start(g, {m, padding_mask(kLengths, S, g), kLengths});
    return a.attend(g, q, st);
  }
  static std::vector<Tensor> grads(const ParameterStore& s) {
    std::vector<Tensor> out;
    for (const Parameter* p : s.all()) out.push_back(p->grad.clone());
    return out;
  }
  void zero_grads() {
    for (Parameter* p : store.all()) p->grad.fill(0.f);
    for (Parameter* p : soft_store.all()) p->grad.fill(0.f);
  }
};

TEST(HardAttention, DecodingAttendsToTheArgmaxOfItsScorer) {
  for (AttentionKind score : {AttentionKind::Bahdanau, AttentionKind::LuongGeneral}) {
    Rig r({.score = score});
    Graph g(Mode::Inference);
    Attended h = r.step(*r.hard, g, g.constant(r.query), g.constant(r.memory));
    Attended s = r.step(*r.soft, g, g.constant(r.query), g.constant(r.memory));
    ASSERT_EQ(h.chosen.size(), static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      const float* a = s.weights.value().data() + b * S;
      const int64_t j = std::max_element(a, a + S) - a;
      EXPECT_EQ(h.chosen[b], j);
      EXPECT_LT(j, kLengths[b]);
      for (int64_t k = 0; k < S; ++k)
        EXPECT_EQ(h.weights.value().data()[b * S + k], k == j ? 1.f : 0.f);
      for (int64_t d = 0; d < D; ++d)  // c_i = h_j
        EXPECT_EQ(h.context.value().data()[b * D + d], r.memory.data()[(b * S + j) * D + d]);
    }
  }
}

TEST(HardAttention, SampledDecodingFollowsAlpha) {
  Rig r({.sample = true});
  Graph g(Mode::Inference, 3);
  std::vector<std::vector<double>> freq(B, std::vector<double>(S, 0));
  const int n = 4000;
  Tensor alpha;
  for (int i = 0; i < n; ++i) {
    Attended h = r.step(*r.hard, g, g.constant(r.query), g.constant(r.memory));
    for (int64_t b = 0; b < B; ++b) freq[b][h.chosen[b]] += 1.0 / n;
    if (i == 0)
      alpha = r.step(*r.soft, g, g.constant(r.query), g.constant(r.memory)).weights.value().clone();
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < S; ++j) {
      const double p = alpha.data()[b * S + j];
      EXPECT_NEAR(freq[b][j], p, 4 * std::sqrt(p * (1 - p) / n) + 1e-9) << b << " " << j;
    }
}

TEST(HardAttention, ExactTrainingReturnsAlphaAndItsLog) {
  Rig r({.training = HardTraining::Exact});
  Graph g(Mode::Train);
  Attended h = r.step(*r.hard, g, g.constant(r.query), g.constant(r.memory));
  Attended s = r.step(*r.soft, g, g.constant(r.query), g.constant(r.memory));
  EXPECT_FALSE(h.context.valid());
  for (int64_t i = 0; i < B * S; ++i) {
    const float a = s.weights.value().data()[i];
    EXPECT_NEAR(h.weights.value().data()[i], a, 1e-6);
    if (a > 0)
      EXPECT_NEAR(h.log_weights.value().data()[i], std::log(a), 1e-5);
    else
      EXPECT_EQ(h.log_weights.value().data()[i], -std::numeric_limits<float>::infinity());
  }
}

// The expected loss E = sum_j alpha_j L(h_j), L(c) = w . c, and its REINFORCE estimate
// (L(h_j) - b) d log alpha_j, j ~ alpha (no mixing): the mean of 4,000 estimates is the exact
// gradient within 4.5 standard errors, for every parameter of the score function.
TEST(HardAttention, ReinforceEstimatesTheExactGradient) {
  Rig r({.training = HardTraining::Reinforce, .mix = 0.f});
  Rng rng(8);
  const Tensor w = testing::random_tensor({B, D}, rng);
  // exact: d/dtheta sum_b sum_j alpha_bj (w_b . h_bj) through soft attention's weights
  r.zero_grads();
  {
    Graph g(Mode::Train);
    Attended s = r.step(*r.soft, g, g.constant(r.query), g.constant(r.memory));
    g.backward(sum_all(s.context * g.constant(w)));
  }
  const std::vector<Tensor> exact = Rig::grads(r.soft_store);
  const int n = 4000;
  std::vector<std::vector<double>> mean(exact.size()), sq(exact.size());
  for (size_t p = 0; p < exact.size(); ++p) {
    mean[p].assign(exact[p].numel(), 0);
    sq[p].assign(exact[p].numel(), 0);
  }
  for (int i = 0; i < n; ++i) {
    r.zero_grads();
    Graph g(Mode::Train, 1000 + i);
    Attended h = r.step(*r.hard, g, g.constant(r.query), g.constant(r.memory));
    Tensor adv =
        Tensor::empty(Shape{1, B});  // -(L - b): the surrogate's gradient is (L - b) d log pi
    for (int64_t b = 0; b < B; ++b) {
      double L = 0;
      for (int64_t d = 0; d < D; ++d)
        L += h.context.value().data()[b * D + d] * w.data()[b * D + d];
      adv.data()[b] = static_cast<float>(-(L - 0.1));
    }
    g.backward(reinforce_surrogate(reshape(h.log_prob, Shape{1, B}), adv, 1.f));
    const std::vector<Tensor> est = Rig::grads(r.store);
    for (size_t p = 0; p < est.size(); ++p)
      for (int64_t k = 0; k < est[p].numel(); ++k) {
        mean[p][k] += est[p].data()[k] / n;
        sq[p][k] += static_cast<double>(est[p].data()[k]) * est[p].data()[k] / n;
      }
  }
  int checked = 0;
  for (size_t p = 0; p < exact.size(); ++p)
    for (int64_t k = 0; k < exact[p].numel(); ++k) {
      const double se = std::sqrt(std::max(0.0, sq[p][k] - mean[p][k] * mean[p][k]) / n);
      EXPECT_NEAR(mean[p][k], exact[p].data()[k], 4.5 * se + 1e-5)
          << r.store.all()[p]->name << "[" << k << "]";
      checked += std::fabs(exact[p].data()[k]) > 1e-3;
    }
  EXPECT_GT(checked, 10);  // the gradients compared are not all zero
}

// The advantage by hand: two sequences, the second one step shorter, gamma 0.5 and 1.
TEST(HardAttention, ReinforceAdvantageIsTheDiscountedSumOfRewardsLessBaselines) {
  Graph g(Mode::Inference);
  constexpr int32_t pad = 0;
  // [T = 3, B = 2] time-major: sequence 0 = (5, 6, 5), sequence 1 = (7, 7, pad)
  const std::vector<int32_t> tokens = {5, 7, 6, 7, 5, pad};
  const std::vector<float> rewards = {-1, -2, -2, -1, -3, 0};
  const std::vector<float> baselines = {-0.5f, -1, -1, -1, -1, 0};
  const Tensor half = reinforce_advantage(g, rewards, baselines, tokens, pad, 3, 2, 0.5f);
  // sequence 0: A_2 = -3 + 1 = -2; A_1 = (-2 + 1) + 0.5 A_2 = -2; A_0 = (-1 + 0.5) + 0.5 A_1 = -1.5
  // sequence 1: A_1 = -1 + 1 = 0; A_0 = (-2 + 1) + 0.5 * 0 = -1; padding 0
  const std::vector<float> want_half = {-1.5f, -1, -2, 0, -2, 0};
  for (size_t i = 0; i < want_half.size(); ++i) EXPECT_FLOAT_EQ(half.data()[i], want_half[i]);
  // gamma 1 with one baseline b for every token: R_t - n_t b, the reward to go less b per step
  const std::vector<float> one_b(6, -1.f);
  const Tensor full = reinforce_advantage(g, rewards, one_b, tokens, pad, 3, 2);
  const std::vector<float> want_full = {(-1 - 2 - 3) + 3.f, (-2 - 1) + 2.f, (-2 - 3) + 2.f,
                                        -1 + 1.f,           -3 + 1.f,       0};
  for (size_t i = 0; i < want_full.size(); ++i) EXPECT_FLOAT_EQ(full.data()[i], want_full[i]);
}

TEST(HardAttention, ReinforceWordBaselinesAverageEachWordsRewards) {
  ReinforceBaseline b(10);
  constexpr int32_t pad = 0;
  b.update(std::vector<float>{-1, -4, -3, 0}, std::vector<int32_t>{5, 6, 5, pad}, pad);
  EXPECT_DOUBLE_EQ(b.per_token(), -8.0 / 3);  // the first batch's mean starts each average
  // word 5: (-1 - 3) / 2; word 6: -4; word 7 unseen takes the global one; padding 0
  std::vector<float> got = b.of(std::vector<int32_t>{5, 6, 7, pad}, pad);
  EXPECT_FLOAT_EQ(got[0], -2.f);
  EXPECT_FLOAT_EQ(got[1], -4.f);
  EXPECT_FLOAT_EQ(got[2], static_cast<float>(-8.0 / 3));
  EXPECT_FLOAT_EQ(got[3], 0.f);
  b.update(std::vector<float>{-12}, std::vector<int32_t>{5}, pad);  // 0.9 old + 0.1 new
  got = b.of(std::vector<int32_t>{5, 6}, pad);
  EXPECT_FLOAT_EQ(got[0], static_cast<float>(0.9 * -2 + 0.1 * -12));
  EXPECT_FLOAT_EQ(got[1], -4.f);  // not in the batch: unchanged
  EXPECT_NEAR(b.per_token(), 0.9 * (-8.0 / 3) + 0.1 * -12, 1e-12);
  // one global baseline: every word gets it
  ReinforceBaseline global;
  global.update(std::vector<float>{-1, -4, -3}, std::vector<int32_t>{5, 6, 5}, pad);
  for (float x : global.of(std::vector<int32_t>{5, 6}, pad))
    EXPECT_FLOAT_EQ(x, static_cast<float>(-8.0 / 3));
}

// Straight-through Gumbel-softmax: forward one-hot; backward through y = softmax((e + g) / tau).
// At tau = 50 the noise is negligible beside the energies' scale and the gradients are soft
// attention's over softmax(e / tau) (L = w . c linear in the context); at tau = 0.5 they are not.
TEST(HardAttention, GumbelAtAHighTemperatureHasSoftAttentionsGradients) {
  auto relative_gap = [](float tau) {
    Rig r({.training = HardTraining::Gumbel, .tau = tau, .tau_min = tau, .anneal = 0.f});
    Rng rng(8);
    const Tensor w = testing::random_tensor({B, D}, rng);
    double gap = 0, norm = 0;
    for (int i = 0; i < 20; ++i) {
      r.zero_grads();
      Graph g(Mode::Train, 50 + i);
      Attended h = r.step(*r.hard, g, g.constant(r.query), g.constant(r.memory));
      for (int64_t b = 0; b < B; ++b) {  // forward: one-hot
        double s = 0;
        for (int64_t j = 0; j < S; ++j) {
          const float x = h.weights.value().data()[b * S + j];
          EXPECT_TRUE(std::fabs(x) < 1e-6 || std::fabs(x - 1) < 1e-6) << x;
          s += x;
        }
        EXPECT_NEAR(s, 1.0, 1e-6);
      }
      g.backward(sum_all(h.context * g.constant(w)));
      const std::vector<Tensor> st = Rig::grads(r.store);
      r.zero_grads();
      Graph gs(Mode::Train);
      AttentionState state =
          r.soft->start(gs, {gs.constant(r.memory), padding_mask(kLengths, S, gs), kLengths});
      Var e = r.soft->energies(gs, gs.constant(r.query), state);
      Var c = weighted_sum(softmax(e * (1.f / tau), state.memory.mask), gs.constant(r.memory));
      gs.backward(sum_all(c * gs.constant(w)));
      const std::vector<Tensor> soft = Rig::grads(r.soft_store);
      for (size_t p = 0; p < st.size(); ++p)
        for (int64_t k = 0; k < st[p].numel(); ++k) {
          gap += std::pow(st[p].data()[k] - soft[p].data()[k], 2);
          norm += std::pow(soft[p].data()[k], 2);
        }
    }
    return std::sqrt(gap / norm);
  };
  std::cerr << "GAPS " << relative_gap(50.f) << " " << relative_gap(5.f) << " " << relative_gap(1.f)
            << " " << relative_gap(0.5f) << "\n";
  EXPECT_LT(relative_gap(50.f), 0.1);
  EXPECT_GT(relative_gap(0.5f), 0.3);
}

TEST(HardAttention, RefusesAScoreFunctionWithoutEnergies) {
  ParameterStore store;
  Rng rng(1);
  EXPECT_THROW(make_attention({.kind = AttentionKind::Hard,
                               .query_dim = D,
                               .memory_dim = D,
                               .attn_dim = A,
                               .hard = {.score = AttentionKind::Mocha}},
                              Scope(store, rng, "attn")),
               Error);
}

}  // namespace
}  // namespace heed
