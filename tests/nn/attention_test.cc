// The attention family: a gradient check of each mechanism's step (query, annotations and
// every parameter), padding that receives no weight and changes nothing, and the shapes of
// the none / local-m alignments.
#include <gtest/gtest.h>

#include "heed/nn/attention/attention.h"
#include "support/errors.h"
#include "support/gradcheck.h"
#include "support/print.h"

namespace heed {

namespace {

constexpr int64_t B = 3, S = 5, Dq = 6, Dm = 6, A = 4;
const std::vector<int32_t> kLengths = {5, 3, 1};  // padding in two of the three sequences

struct AttentionRig {
  ParameterStore store;
  Rng rng{17};
  std::unique_ptr<Attention> attn;
  explicit AttentionRig(AttentionKind kind, int64_t window = 10) {
    attn = make_attention({.kind = kind,
                           .query_dim = Dq,
                           .memory_dim = Dm,
                           .attn_dim = A,
                           .local = {.window = window}},
                          Scope(store, rng, "attn"));
  }
  // One step: start on the memory, attend with the query at target step t.
  Attended step(Graph& g, Var query, Var memory, int64_t t = 1) {
    AttentionState st = attn->start(g, {memory, padding_mask(kLengths, S, g), kLengths});
    st.step = t;
    return attn->attend(g, query, st);
  }
};

class EachAttention : public ::testing::TestWithParam<AttentionKind> {};

TEST_P(EachAttention, StepGradientsMatchFiniteDifferences) {
  AttentionRig s(GetParam());
  Rng rng(3);
  std::vector<Tensor> in = {testing::random_tensor({B, Dq}, rng),
                            testing::random_tensor({B, S, Dm}, rng)};
  std::vector<Parameter*> params(s.store.all().begin(), s.store.all().end());
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>& x) {
        Attended a = s.step(g, x[0], x[1]);
        return concat({a.context, a.weights}, 1);  // both outputs carry gradient
      },
      in, {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 24}, {}, params);
}

TEST_P(EachAttention, PaddingGetsNoWeightAndChangesNothing) {
  AttentionRig s(GetParam());
  Rng rng(4);
  Tensor q = testing::random_tensor({B, Dq}, rng), mem = testing::random_tensor({B, S, Dm}, rng);
  auto run = [&](const Tensor& memory) {
    Graph g(Mode::Inference);
    Attended a = s.step(g, g.constant(q), g.constant(memory));
    return std::pair{a.context.value().clone(), a.weights.value().clone()};
  };
  auto [c1, w1] = run(mem);
  Tensor noisy = mem.clone();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = kLengths[b]; j < S; ++j)
      for (int64_t d = 0; d < Dm; ++d) noisy.data()[(b * S + j) * Dm + d] += 100.f;
  auto [c2, w2] = run(noisy);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = kLengths[b]; j < S; ++j) EXPECT_EQ(w1.data()[b * S + j], 0.f);
  for (int64_t i = 0; i < c1.numel(); ++i) EXPECT_EQ(c1.data()[i], c2.data()[i]);
  const AttentionKind k = GetParam();
  if (k != AttentionKind::LocalM && k != AttentionKind::LocalP && k != AttentionKind::Monotonic &&
      k != AttentionKind::Mocha && k != AttentionKind::Sigmoid && k != AttentionKind::Structured)
    for (int64_t b = 0; b < B; ++b) {  // global weights are a distribution over the source
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += w1.data()[b * S + j];
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
}

INSTANTIATE_TEST_SUITE_P(All, EachAttention, ::testing::ValuesIn(kAllAttentionKinds),
                         attention_test_name<::testing::TestParamInfo<AttentionKind>>);

TEST(Attention, NoneIsTheLastAnnotation) {
  AttentionRig s(AttentionKind::None);
  Rng rng(5);
  Tensor mem = testing::random_tensor({B, S, Dm}, rng);
  Graph g(Mode::Inference);
  Attended a = s.step(g, g.constant(testing::random_tensor({B, Dq}, rng)), g.constant(mem));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t d = 0; d < Dm; ++d)
      EXPECT_EQ(a.context.value().data()[b * Dm + d],
                mem.data()[(b * S + kLengths[b] - 1) * Dm + d]);
}

TEST(Attention, LocalMonotonicStaysInsideItsWindow) {
  AttentionRig s(AttentionKind::LocalM, /*window=*/1);
  Rng rng(6);
  Graph g(Mode::Inference);
  const int64_t t = 3;  // p_t = 3 (clamped to the last real position for shorter sequences)
  Attended a = s.step(g, g.constant(testing::random_tensor({B, Dq}, rng)),
                      g.constant(testing::random_tensor({B, S, Dm}, rng)), t);
  for (int64_t b = 0; b < B; ++b) {
    int64_t p = std::min<int64_t>(t, kLengths[b] - 1);
    for (int64_t j = 0; j < S; ++j) {
      float w = a.weights.value().data()[b * S + j];
      if (std::abs(j - p) > 1 || j >= kLengths[b]) {
        EXPECT_EQ(w, 0.f) << "b " << b << " j " << j;
      }
    }
    EXPECT_GT(a.weights.value().data()[b * S + p], 0.f);
  }
}

// Decoding with monotonic attention and MoChA: over many steps with random queries, each row's
// stop never moves back; monotonic attends to the stop alone, MoChA to a distribution over the
// w entries ending at it; once a row runs off its end it attends to nothing (context 0).
TEST(Attention, MonotonicDecodingNeverMovesBack) {
  for (AttentionKind kind : {AttentionKind::Monotonic, AttentionKind::Mocha}) {
    SCOPED_TRACE(attention_name(kind));
    ParameterStore store;
    Rng rng(21);
    const int64_t w = 2, Sl = 9;
    const std::vector<int32_t> lengths = {9, 9, 8, 7, 6, 5, 3, 2};
    const auto B = static_cast<int64_t>(lengths.size());
    // r = 0.5: stops likely enough that rows move along rather than run off at once
    auto attn = make_attention({.kind = kind,
                                .query_dim = Dq,
                                .memory_dim = Dm,
                                .attn_dim = A,
                                .monotonic = {.chunk = w, .bias = 0.5f}},
                               Scope(store, rng, "attn"));
    Graph g(Mode::Inference);
    Var mem = g.constant(testing::random_tensor({B, Sl, Dm}, rng));
    AttentionState st = attn->start(g, {mem, padding_mask(lengths, Sl, g), lengths});
    std::vector<int64_t> last(B, 0);
    std::vector<bool> ended(B, false);
    int moves = 0;
    for (int step = 0; step < 12; ++step) {
      Attended a = attn->attend(g, g.constant(testing::random_tensor({B, Dq}, rng, -3.f, 3.f)), st);
      for (int64_t b = 0; b < B; ++b) {
        const float* wb = a.weights.value().data() + b * Sl;
        const float* c = a.context.value().data() + b * Dm;
        int64_t stop = -1;
        double sum = 0;
        for (int64_t j = 0; j < Sl; ++j) {
          sum += wb[j];
          if (wb[j] > 0.f) stop = j;  // the last attended entry is the stop
        }
        if (stop < 0) {  // ran off: nothing now and nothing ever after
          ended[b] = true;
          for (int64_t d = 0; d < Dm; ++d) EXPECT_EQ(c[d], 0.f);
          continue;
        }
        EXPECT_FALSE(ended[b]) << "row " << b << " attends again after running off";
        EXPECT_GE(stop, last[b]) << "row " << b << " step " << step;
        EXPECT_LT(stop, lengths[b]);
        EXPECT_NEAR(sum, 1.0, 1e-5);
        for (int64_t j = 0; j < Sl; ++j) {
          if (wb[j] > 0.f) {
            EXPECT_GT(j, stop - (kind == AttentionKind::Mocha ? w : 1));
          }
        }
        moves += stop > last[b];
        last[b] = stop;
      }
    }
    EXPECT_GT(moves, 0) << "the case should move some stop forward";
  }
}

TEST(Attention, UnknownNamesAndBadSizesAreErrors) {
  EXPECT_NE(testing::error_of([] { parse_attention("luong"); }).find("unknown attention 'luong'"),
            std::string::npos);
  ParameterStore store;
  Rng rng(1);
  EXPECT_NE(testing::error_of([&] {
              make_attention({.kind = AttentionKind::LuongDot, .query_dim = 4, .memory_dim = 8},
                             Scope(store, rng));
            }).find("luong-dot attention needs equal"),
            std::string::npos);
  for (const char* n : {"none", "bahdanau", "luong-dot", "luong-general", "luong-concat", "local-m",
                        "local-p", "monotonic", "mocha"})
    EXPECT_EQ(attention_name(parse_attention(n)), n);
}

}  // namespace
}  // namespace heed
