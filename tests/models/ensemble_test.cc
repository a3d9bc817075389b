// Ensemble decoding: one member decodes exactly as the model alone; copies of one model (or one
// model twice) decode as it (the mean of equal distributions is that distribution, so a sum of
// log-probabilities would fail); each step of a Transformer + reversed-source RNN ensemble gives
// the log of the mean of the members' probabilities and the mean of their attention rows in the
// ensemble's source order, through beam reorderings.
#include "heed/models/ensemble.h"

#include <gtest/gtest.h>

#include <cmath>

#include "heed/data/vocab.h"
#include "heed/decode/beam_search.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/transformer_seq2seq.h"
#include "support/errors.h"
#include "support/seq2seq_models.h"

namespace heed {
namespace {

using testing::random_sources;
using testing::SmallSeq2Seq;
constexpr int64_t kV = testing::kSmallVocab;

void expect_same(const std::vector<Hypothesis>& a, const std::vector<Hypothesis>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens) << "sentence " << i;
    EXPECT_NEAR(a[i].log_prob, b[i].log_prob, tol) << "sentence " << i;
    ASSERT_EQ(a[i].attention.size(), b[i].attention.size()) << "sentence " << i;
    for (size_t t = 0; t < a[i].attention.size(); ++t)
      for (size_t s = 0; s < a[i].attention[t].size(); ++s)
        EXPECT_NEAR(a[i].attention[t][s], b[i].attention[t][s], 1e-5) << i << " " << t;
  }
}

TEST(Ensemble, OneMemberDecodesAsTheModel) {
  SmallSeq2Seq small("transformer", 31);
  const Ensemble one({small.model.get()});
  auto src = random_sources(small.rng, 8);
  for (int beam : {1, 4})
    expect_same(decode_batch(one, src, {.beam = beam}),
                decode_batch(*small.model, src, {.beam = beam}), 1e-5);
}

TEST(Ensemble, CopiesOfOneModelDecodeAsIt) {
  // "luong": Luong attention over a reversed source
  for (const char* kind : {"transformer", "luong"}) {
    SmallSeq2Seq x(kind, 32), y(kind, 32);  // two objects with the same weights
    const Seq2SeqModel *a = x.model.get(), *b = y.model.get();
    Rng rng(33);
    auto src = random_sources(rng, 10);
    const auto alone = decode_batch(*a, src, {.beam = 4, .length_penalty = 0.6});
    expect_same(decode_batch(Ensemble({a, b}), src, {.beam = 4, .length_penalty = 0.6}), alone,
                1e-4);
    // one object twice: its two decoders interleave, each with its own state (an RNN's
    // attention memory included)
    expect_same(decode_batch(Ensemble({a, a}), src, {.beam = 4, .length_penalty = 0.6}), alone,
                1e-4);
  }
}

TEST(Ensemble, StepIsTheMeanOfTheMembersProbabilitiesAndAttention) {
  SmallSeq2Seq tf("transformer", 34), rnn("luong", 36);  // Luong over a reversed source
  const Ensemble both({tf.model.get(), rnn.model.get()});
  ASSERT_FALSE(both.reverse_source());  // the first member's order
  auto src = random_sources(tf.rng, 5);
  const std::vector<std::vector<int32_t>> none(src.size());
  constexpr int64_t K = 3;
  const Seq2SeqBatch b = make_batch(src, none, false);
  const int64_t rows = b.B * K;
  const auto e = testing::decode_steps(both, b, rows, K, K);
  const auto p = testing::decode_steps(*tf.model, b, rows, K, K);
  const auto q = testing::decode_steps(*rnn.model, make_batch(src, none, true), rows, K, K);
  for (size_t t = 0; t < e.scores.size(); ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double total = 0;
      for (int64_t v = 0; v < kV; ++v) {
        const size_t i = r * kV + v;
        const double mean = 0.5 * (std::exp(p.scores[t][i]) + std::exp(q.scores[t][i]));
        EXPECT_NEAR(e.scores[t][i], std::log(mean), 1e-5) << "step " << t << " row " << r;
        total += std::exp(e.scores[t][i]);
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
      const int64_t len = b.src_lengths[r / K];
      for (int64_t s = 0; s < len; ++s) {
        const float mean = 0.5f * (p.weights[t][r * b.S + s] + q.weights[t][r * b.S + len - 1 - s]);
        EXPECT_NEAR(e.weights[t][r * b.S + s], mean, 1e-6) << "step " << t << " row " << r;
      }
    }
  }
}

TEST(Ensemble, MembersMustShareTheTargetVocabulary) {
  SmallSeq2Seq a("transformer", 35);
  ParameterStore store;
  TransformerSeq2SeqConfig c;
  c.src_vocab = kV;
  c.tgt_vocab = kV + 1;
  c.layer = {.d_model = 16, .heads = 2, .ff = 32, .dropout = 0, .norm = NormPlacement::Pre};
  TransformerSeq2Seq b(c, Scope(store, a.rng));
  EXPECT_NE(testing::error_of([&] {
              Ensemble({a.model.get(), &b});
            }).find("model 2 has 16 target"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { Ensemble({}); }).find("at least one"), std::string::npos);
}

}  // namespace
}  // namespace heed
