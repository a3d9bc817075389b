// Monotonic multihead attention (Ma et al. 2020): finite-difference gradients of the teacher-
// forced layer, parameters included, for hard heads, MoChA heads and infinite lookback; with
// saturated stopping probabilities the expectation is the hard path, so the teacher-forced
// layer equals hard decoding step by step; hard stops never move back and a beam reorder
// continues the rows it is given; HeadDrop masks whole heads; the heads' expected delays (their
// latency terms: tests/nn/latency_loss_test.cc); one shared policy, handed from its layer to a
// layer that follows it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "heed/nn/monotonic_multi_head_attention.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

constexpr int64_t kD = 8, kHeads = 2;

// The saturated cases' inputs: two targets of T positions (packed) under sources of S and S - 2.
struct SaturatedCase {
  static constexpr int64_t B = 2, T = 6, S = 7;
  Rng rng{9};
  Tensor x = testing::random_tensor({B * T, kD}, rng);  // [B T, d]
  Tensor memory = testing::random_tensor({B * S - 2, kD}, rng);
  std::vector<int32_t> src_len{S, S - 2}, tgt_len = std::vector<int32_t>(B, T);
  // energies scaled up until every stopping probability is 0 or 1 (to float precision)
  static void saturate(ParameterStore& store, const std::string& W_q) {
    for (Parameter* p : store.all())
      if (p->name == W_q)
        for (float& w : p->value.span()) w *= 3000.f;
  }
  // decoding's input at step i: position i of each target  [B, d]
  Tensor step_input(int64_t i) const {
    Tensor xi = Tensor::empty({B, kD});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < kD; ++k) xi.data()[b * kD + k] = x.data()[(b * T + i) * kD + k];
    return xi;
  }
};

TEST(MonotonicMultiHeadAttention, GradientsMatchFiniteDifferences) {
  // chunk 0: each head attends to its stop; 2: MoChA; 9 >= every source: infinite lookback
  for (int64_t chunk : {0, 2, 9}) {
    SCOPED_TRACE(::testing::Message() << "chunk " << chunk);
    ParameterStore store;
    Rng init(3);
    // r = -0.5: stopping probabilities around 0.4, where every path carries weight
    MonotonicMultiHeadAttention mma(kD, kHeads, {.chunk = chunk, .bias = -0.5f, .noise = 0.f},
                                    Scope(store, init));
    Rng rng(5);
    // packed sequences: targets of lengths 4 and 2 (6 rows), sources of 5 and 3 (8 rows)
    std::vector<Tensor> in = {testing::random_tensor({6, kD}, rng),
                              testing::random_tensor({8, kD}, rng)};
    static const std::vector<int32_t> src_len = {5, 3}, tgt_len = {4, 2};
    std::vector<Parameter*> params(store.all().begin(), store.all().end());
    testing::expect_gradients(
        [&](Graph& g, std::vector<Var>& x) {
          const Packing tgt = make_packing(g, tgt_len), src = make_packing(g, src_len);
          return mma.cross(x[0], tgt, mma.project_memory(x[1], src), src_len);
        },
        in, {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 24}, {}, params);
  }
}

// Energies scaled up until every p is 0 or 1 (to float precision): the expected alignment is
// then the hard path, and the teacher-forced layer's output at position i is hard decoding's
// at step i, for hard heads and MoChA heads alike.
TEST(MonotonicMultiHeadAttention, SaturatedExpectationEqualsHardDecoding) {
  for (int64_t chunk : {0, 2}) {
    SCOPED_TRACE(::testing::Message() << "chunk " << chunk);
    ParameterStore store;
    Rng init(11);
    MonotonicMultiHeadAttention mma(kD, kHeads, {.chunk = chunk, .bias = 0.f, .noise = 0.f},
                                    Scope(store, init));
    SaturatedCase::saturate(store, "W_q");  // the stopping energies' queries, not MoChA's chunk's
    const SaturatedCase cs;
    const int64_t B = cs.B, T = cs.T, S = cs.S;
    Graph g(Mode::Inference);
    const Packing src = make_packing(g, cs.src_len), tgt = make_packing(g, cs.tgt_len);
    Var kv = mma.project_memory(g.constant(cs.memory), src);
    Var full = mma.cross(g.constant(cs.x), tgt, kv, cs.src_len);  // [B T, d]
    MonotonicHeadsState st = mma.make_state(B);
    std::vector<int32_t> last(B * kHeads, 0);
    int moved = 0;
    for (int64_t i = 0; i < T; ++i) {
      const Tensor xi = cs.step_input(i);
      Tensor w;
      Var y = mma.step(g.constant(xi), kv, cs.src_len, st, &w);  // [B, d]
      for (int64_t b = 0; b < B; ++b)
        for (int64_t k = 0; k < kD; ++k)
          EXPECT_NEAR(y.value().data()[b * kD + k], full.value().data()[(b * T + i) * kD + k],
                      1e-3f)
              << "row " << b << " step " << i;
      for (size_t r = 0; r < st.stop.size(); ++r) {
        // a stop never moves back; once off the end, it stays off
        if (last[r] < 0) {
          EXPECT_LT(st.stop[r], 0);
        }
        if (st.stop[r] >= 0) {
          EXPECT_GE(st.stop[r], last[r]);
          // what the head attends to ends at its stop and sums to 1
          const float* wr = w.data() + static_cast<int64_t>(r) * S;
          float sum = 0;
          for (int64_t j = 0; j < S; ++j) {
            sum += wr[j];
            if (j > st.stop[r] || j <= st.stop[r] - std::max<int64_t>(chunk, 1)) {
              EXPECT_EQ(wr[j], 0.f) << "head row " << r << " j " << j;
            }
          }
          EXPECT_NEAR(sum, 1.f, 1e-5f);
        }
        moved += st.stop[r] != last[r];
        last[r] = st.stop[r];
      }
    }
    EXPECT_GT(moved, 2) << "the case should move the heads along the source";
  }
}

// The expected delay E[d^h_i] = sum_j (j + 1) alpha^h_ij + |x| (1 - sum_j alpha^h_ij) of every
// head at every step: 1 when every head stops at the first entry at every step, |x| when none
// ever stops, 0 on padding steps (sources of 5 and 3 under targets of 4 and 2); in between,
// within (1, |x|), with finite-difference gradients.
TEST(MonotonicMultiHeadAttention, ExpectedDelayFromStopAtOnceToReadEverything) {
  static const std::vector<int32_t> src_len = {5, 3}, tgt_len = {4, 2};
  Rng rng(5);
  std::vector<Tensor> in = {testing::random_tensor({6, kD}, rng),
                            testing::random_tensor({8, kD}, rng)};
  for (float bias : {60.f, -60.f, -0.5f}) {
    SCOPED_TRACE(::testing::Message() << "r = " << bias);
    ParameterStore store;
    Rng init(3);
    MonotonicMultiHeadAttention mma(kD, kHeads, {.bias = bias, .noise = 0.f}, Scope(store, init));
    Graph g(Mode::Inference);
    const Packing tgt = make_packing(g, tgt_len), src = make_packing(g, src_len);
    Var delays;
    mma.cross(g.constant(in[0]), tgt, mma.project_memory(g.constant(in[1]), src), src_len, &delays);
    ASSERT_EQ(delays.shape(), (Shape{2, kHeads, 4}));
    const float* d = delays.value().data();
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < kHeads; ++h)
        for (int64_t i = 0; i < 4; ++i) {
          const float v = d[(b * kHeads + h) * 4 + i], x = static_cast<float>(src_len[b]);
          if (i >= tgt_len[b]) {
            EXPECT_EQ(v, 0.f) << "padding step " << i << " of row " << b;
          } else if (bias > 0) {
            EXPECT_NEAR(v, 1.f, 1e-5f);
          } else if (bias < -1) {
            EXPECT_NEAR(v, x, 1e-5f);
          } else {
            EXPECT_GT(v, 1.f);
            EXPECT_LT(v, x);
          }
        }
    if (bias > -1 && bias < 0) {
      std::vector<Parameter*> params(store.all().begin(), store.all().end());
      testing::expect_gradients(
          [&](Graph& gg, std::vector<Var>& x) {
            const Packing t = make_packing(gg, tgt_len), s = make_packing(gg, src_len);
            Var dl;
            mma.cross(x[0], t, mma.project_memory(x[1], s), src_len, &dl);
            return dl;
          },
          in, {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 24}, {}, params);
    }
  }
}

// HeadDrop (Inaguma et al. 2020): with W^O = I and b^O = 0 the layer's output is the heads side
// by side, so in a training graph each head block of each sentence is either 0 (masked out) or
// the undropped head times h / (heads kept in that sentence); about p_HD of the heads are masked
// out; an inference graph drops nothing. Four heads, 300 sentences of one target and one source
// position (the same ones, so that every sentence's undropped heads are the same).
TEST(MonotonicMultiHeadAttention, HeadDropMasksWholeHeadsAndScalesTheKeptOnes) {
  constexpr int64_t H = 4, B = 300, dk = kD / H;
  constexpr float p = 0.25f;
  ParameterStore store;
  Rng init(3);
  MonotonicMultiHeadAttention mma(kD, H, {.bias = 0.f, .noise = 0.f, .head_drop = p},
                                  Scope(store, init));
  for (Parameter* q : store.all())
    if (q->name == "W_o")
      for (int64_t r = 0; r < kD; ++r)
        for (int64_t c = 0; c < kD; ++c) q->value.data()[r * kD + c] = r == c ? 1.f : 0.f;
  Rng rng(5);
  const Tensor x1 = testing::random_tensor({1, kD}, rng), m1 = testing::random_tensor({1, kD}, rng);
  Tensor x = Tensor::empty({B, kD}), m = Tensor::empty({B, kD});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < kD; ++k) {
      x.data()[b * kD + k] = x1.data()[k];
      m.data()[b * kD + k] = m1.data()[k];
    }
  const std::vector<int32_t> len(B, 1);
  auto run = [&](Mode mode) {
    Graph g(mode);
    const Packing pk = make_packing(g, len);
    // a copy: the value lives in the graph's arena, freed with it
    return mma.cross(g.constant(x), pk, mma.project_memory(g.constant(m), pk), len).value().clone();
  };
  const Tensor ref = run(Mode::Inference), y = run(Mode::Train);
  for (int64_t k = 0; k < kD; ++k)  // the undropped heads: nonzero, the same in every sentence
    ASSERT_GT(std::abs(ref.data()[k]), 1e-4f);
  int64_t dropped = 0;
  for (int64_t b = 0; b < B; ++b) {
    int64_t kept = 0;
    for (int64_t h = 0; h < H; ++h) kept += y.data()[b * kD + h * dk] != 0.f;
    dropped += H - kept;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t k = h * dk; k < (h + 1) * dk; ++k) {
        const float v = y.data()[b * kD + k], r = ref.data()[b * kD + k];
        EXPECT_EQ(ref.data()[b * kD + k], ref.data()[k]) << "inference drops nothing";
        if (y.data()[b * kD + h * dk] == 0.f)
          EXPECT_EQ(v, 0.f) << "sentence " << b << ": head " << h << " is masked out whole";
        else
          EXPECT_NEAR(v, r * static_cast<float>(H) / static_cast<float>(kept), 1e-5f)
              << "sentence " << b << " head " << h << ", " << kept << " kept";
      }
  }
  // 1,200 heads, each masked out with p = 0.25: 300 expected, standard deviation 15
  EXPECT_NEAR(static_cast<double>(dropped), p * B * H, 4 * 15.0);
}

// One policy for the decoder (MonotonicHeadsConfig::shared, MILk's in a Transformer): the
// layer that holds it has one stopping head over the whole width, hands its expected alignment
// [B, T, S] to a layer that follows (which has no stopping energies), and gives one delay per
// step [B, 1, T]; finite-difference gradients through both layers, parameters included, for
// MoChA chunks of 2 and infinite lookback.
TEST(MonotonicMultiHeadAttention, SharedPolicyGradientsMatchFiniteDifferences) {
  for (int64_t chunk : {2, 9}) {
    SCOPED_TRACE(::testing::Message() << "chunk " << chunk);
    ParameterStore store;
    Rng init(3);
    const MonotonicHeadsConfig c{.chunk = chunk, .bias = -0.5f, .noise = 0.f, .shared = true};
    MonotonicMultiHeadAttention lead(kD, kHeads, c, Scope(store, init) / "lead");
    MonotonicMultiHeadAttention follow(kD, kHeads, c, Scope(store, init) / "follow", true);
    EXPECT_EQ(lead.stopping_heads(), 1);
    EXPECT_TRUE(follow.follows());
    for (Parameter* q : store.all()) {
      EXPECT_FALSE(q->name == "follow/W_q" || q->name == "follow/r") << "a follower stops nothing";
      if (q->name == "lead/r") {
        EXPECT_EQ(q->value.numel(), 1);
      }
    }
    Rng rng(5);
    std::vector<Tensor> in = {testing::random_tensor({6, kD}, rng),
                              testing::random_tensor({6, kD}, rng),
                              testing::random_tensor({8, kD}, rng)};
    static const std::vector<int32_t> src_len = {5, 3}, tgt_len = {4, 2};
    {
      Graph g(Mode::Inference);
      const Packing tgt = make_packing(g, tgt_len), src = make_packing(g, src_len);
      Var delays, policy;
      lead.cross(g.constant(in[0]), tgt, lead.project_memory(g.constant(in[2]), src), src_len,
                 &delays, &policy);
      EXPECT_EQ(delays.shape(), (Shape{2, 1, 4}));
      EXPECT_EQ(policy.shape(), (Shape{2, 4, 5}));
      EXPECT_EQ(follow.project_memory(g.constant(in[2]), src).shape(),
                (Shape{2, 5, 2 * kD}));  // V | K'
    }
    std::vector<Parameter*> params(store.all().begin(), store.all().end());
    testing::expect_gradients(
        [&](Graph& g, std::vector<Var>& x) {
          const Packing tgt = make_packing(g, tgt_len), src = make_packing(g, src_len);
          Var policy;
          Var y = lead.cross(x[0], tgt, lead.project_memory(x[2], src), src_len, nullptr, &policy);
          return y + follow.cross(x[1], tgt, follow.project_memory(x[2], src), src_len, nullptr,
                                  &policy);
        },
        in, {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 24}, {}, params);
  }
}

// The shared policy saturated (its energies scaled up until every p is 0 or 1): teacher forcing
// equals hard decoding step by step in the layer that holds the policy and in the one that
// follows it (decoding with the policy's state, which it does not move), and every head of both
// attends over the chunk ending at the one stop.
TEST(MonotonicMultiHeadAttention, SharedPolicySaturatedEqualsHardDecoding) {
  constexpr int64_t chunk = 3;
  ParameterStore store;
  Rng init(11);
  const MonotonicHeadsConfig c{.chunk = chunk, .bias = 0.f, .noise = 0.f, .shared = true};
  MonotonicMultiHeadAttention lead(kD, kHeads, c, Scope(store, init) / "lead");
  MonotonicMultiHeadAttention follow(kD, kHeads, c, Scope(store, init) / "follow", true);
  SaturatedCase::saturate(store, "lead/W_q");
  const SaturatedCase cs;
  const int64_t B = cs.B, T = cs.T, S = cs.S;
  Graph g(Mode::Inference);
  const Packing src = make_packing(g, cs.src_len), tgt = make_packing(g, cs.tgt_len);
  Var kv_lead = lead.project_memory(g.constant(cs.memory), src);
  Var kv_follow = follow.project_memory(g.constant(cs.memory), src);
  Var policy;
  Var full_lead = lead.cross(g.constant(cs.x), tgt, kv_lead, cs.src_len, nullptr, &policy);
  Var full_follow = follow.cross(g.constant(cs.x), tgt, kv_follow, cs.src_len, nullptr, &policy);
  MonotonicHeadsState st = lead.make_state(B);
  ASSERT_EQ(st.stop.size(), static_cast<size_t>(B));  // one stop per row
  EXPECT_TRUE(follow.make_state(B).stop.empty());
  int moved = 0;
  std::vector<int32_t> last(B, 0);
  for (int64_t i = 0; i < T; ++i) {
    const Tensor xi = cs.step_input(i);
    Tensor w_lead, w_follow;
    Var y_lead = lead.step(g.constant(xi), kv_lead, cs.src_len, st, &w_lead);
    const std::vector<int32_t> stops = st.stop;
    Var y_follow = follow.step(g.constant(xi), kv_follow, cs.src_len, st, &w_follow);
    EXPECT_EQ(st.stop, stops) << "a layer that follows does not move the policy";
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t k = 0; k < kD; ++k) {
        EXPECT_NEAR(y_lead.value().data()[b * kD + k],
                    full_lead.value().data()[(b * T + i) * kD + k], 1e-3f)
            << "row " << b << " step " << i;
        EXPECT_NEAR(y_follow.value().data()[b * kD + k],
                    full_follow.value().data()[(b * T + i) * kD + k], 1e-3f)
            << "row " << b << " step " << i;
      }
      const int32_t t = st.stop[b];
      if (t < 0) continue;
      EXPECT_GE(t, last[b]);
      moved += t != last[b];
      last[b] = t;
      for (const Tensor* w : {&w_lead, &w_follow})
        for (int64_t hh = 0; hh < kHeads; ++hh) {
          const float* wr = w->data() + (b * kHeads + hh) * S;
          float sum = 0;
          for (int64_t j = 0; j < S; ++j) {
            sum += wr[j];
            if (j > t || j <= t - chunk) {
              EXPECT_EQ(wr[j], 0.f) << "row " << b << " head " << hh << " j " << j;
            }
          }
          EXPECT_NEAR(sum, 1.f, 1e-5f);
        }
    }
  }
  EXPECT_GT(moved, 1) << "the case should move the policy along the source";
}

TEST(MonotonicMultiHeadAttention, ReorderContinuesTheGivenRows) {
  MonotonicHeadsState st{.heads = 2, .stop = {3, 4, -1, 0, 2, 2}};
  const std::vector<int32_t> from = {1, 1, 0};
  st.reorder(from);
  EXPECT_EQ(st.stop, (std::vector<int32_t>{-1, 0, -1, 0, 3, 4}));
  EXPECT_TRUE(st.ran_off());
  st.reorder(std::vector<int32_t>{2, 2, 2});
  EXPECT_EQ(st.stop, (std::vector<int32_t>{3, 4, 3, 4, 3, 4}));
  EXPECT_FALSE(st.ran_off());
}

}  // namespace
}  // namespace heed
