// Joint CTC-attention (Kim, Hori & Watanabe 2017; Watanabe et al. 2017): the loss is lambda CTC +
// (1 - lambda) attention, each computed on its own; decoding with CTC weight 0 equals
// attention-only beam search (tokens and scores); a finished hypothesis's joint score is (1 -
// lambda) log p_att + lambda log p_ctc of its labels (the forward algorithm's); and the CTC
// head's gradient matches finite differences through the joint loss.
#include <gtest/gtest.h>

#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/decode/beam_search.h"
#include "heed/decode/ctc_search.h"
#include "heed/decode/forced.h"
#include "heed/models/rnn_seq2seq.h"
#include "support/seq2seq_models.h"

namespace heed {
namespace {

RnnSeq2SeqConfig small(float ctc_weight, float decode_weight = -1.f) {
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{
      .cell = CellKind::Lstm, .vocab = testing::kSmallVocab, .embed = 8, .hidden = 8};
  c.tgt_vocab = testing::kSmallVocab;
  c.tgt_embed = 8;
  c.dec_hidden = 16;
  c.attn_dim = 8;
  c.ctc_weight = ctc_weight;
  c.ctc_decode_weight = decode_weight;
  return c;
}

TEST(JointCtc, TheLossIsTheWeightedSum) {
  ParameterStore s1;
  Rng r1(5);
  const RnnSeq2Seq joint(small(0.3f), Scope(s1, r1));
  // the same weights with lambda 0 (no CTC head, so the same draws for every other parameter)
  ParameterStore s0;
  Rng r0(5);
  const RnnSeq2Seq att(small(0.f), Scope(s0, r0));
  for (const Parameter* p : s0.all()) ASSERT_TRUE(s1.contains(p->name)) << p->name;
  for (Parameter* p : s1.all())
    if (s0.contains(p->name)) p->value.copy_from(s0.get(p->name).value);
  Rng rng(7);
  const auto src = testing::random_sources(rng, 4);
  const auto tgt = testing::random_sources(rng, 4);
  const Seq2SeqBatch b = make_batch(src, tgt, false);
  Graph g(Mode::Inference);
  const double j = joint.loss(g, b).value().data()[0], a = att.loss(g, b).value().data()[0];
  // CTC by hand: the head over the encoder's states, every pair alone
  double ctc = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    const Seq2SeqBatch one = make_batch({src[i]}, {tgt[i]}, false);
    Graph h(Mode::Inference);
    const RnnSeq2Seq::DecoderState st = joint.start(h, one);
    Var lp = log_softmax(linear(st.attention.memory.annotations, h.param(s1.get("ctc/W")),
                                h.param(s1.get("ctc/b"))));
    const double logp =
        ctc_log_prob(lp.value().data(), one.S, testing::kSmallVocab, Vocab::kPad, tgt[i]);
    ctc -= std::isfinite(logp) ? logp : 0.0;  // zero_infinity
  }
  ctc /= static_cast<double>(b.target_tokens);
  EXPECT_NEAR(j, 0.7 * a + 0.3 * ctc, 1e-4);
}

TEST(JointCtc, WeightZeroDecodesAsAttentionAlone) {
  ParameterStore s1;
  Rng r1(9);
  const RnnSeq2Seq joint(small(0.5f, /*decode_weight=*/0.f), Scope(s1, r1));
  Rng rng(11);
  const auto src = testing::random_sources(rng, 6);
  const BeamOptions o{.beam = 4, .n_best = 2};
  const auto a = beam_search_n_best(joint, src, o);
  // the attention decoder's own search: a model of the same weights without a CTC head (the
  // joint model's decoder is wrapped, its prefixes followed through every reorder and drop)
  RnnSeq2SeqConfig none = small(0.f);
  ParameterStore s3;
  Rng r3(9);
  const RnnSeq2Seq att(none, Scope(s3, r3));
  for (Parameter* p : s3.all()) p->value.copy_from(s1.get(p->name).value);
  const auto b = beam_search_n_best(att, src, o);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (size_t k = 0; k < a[i].size(); ++k) {
      EXPECT_EQ(a[i][k].tokens, b[i][k].tokens);
      EXPECT_EQ(a[i][k].log_prob, b[i][k].log_prob);
    }
  }
}

TEST(JointCtc, AHypothesisScoresItsWeightedLogProbabilities) {
  ParameterStore s;
  Rng r(13);
  const RnnSeq2Seq joint(small(0.4f), Scope(s, r));
  RnnSeq2SeqConfig none = small(0.f);
  ParameterStore s0;
  Rng r0(13);
  const RnnSeq2Seq att(none, Scope(s0, r0));
  for (Parameter* p : s0.all()) p->value.copy_from(s.get(p->name).value);
  Rng rng(17);
  const auto src = testing::random_sources(rng, 5);
  const auto hyps = beam_search(joint, src, {.beam = 3, .length_penalty = 0.0});
  for (size_t i = 0; i < src.size(); ++i) {
    const Hypothesis& h = hyps[i];
    // attention: log p_att(y <eos> | x) by forced decoding of the attention-only model
    const double att_lp = force_decode(att, {src[i]}, {h.tokens}).at(0).log_prob;
    // CTC: the forward algorithm on the head's frames
    Graph g(Mode::Inference);
    const Seq2SeqBatch one = make_batch({src[i]}, {h.tokens}, false);
    const RnnSeq2Seq::DecoderState st = joint.start(g, one);
    Var lp = log_softmax(
        linear(st.attention.memory.annotations, g.param(s.get("ctc/W")), g.param(s.get("ctc/b"))));
    const double ctc_lp =
        ctc_log_prob(lp.value().data(), one.S, testing::kSmallVocab, Vocab::kPad, h.tokens);
    if (!std::isfinite(ctc_lp)) continue;
    EXPECT_NEAR(h.log_prob, 0.6 * att_lp + 0.4 * ctc_lp, 1e-3) << i;
  }
}

}  // namespace
}  // namespace heed
