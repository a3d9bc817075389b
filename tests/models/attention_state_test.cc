// Attention that keeps state: a mechanism whose scores read its previous alignment (as
// monotonic attention, MoChA and coverage do) decodes with beam 4 and every hypothesis gets the
// same tokens' scores and attention as decoding that hypothesis alone, so the alignment was
// carried over Graph::rewind and followed its beam at every reordering; and one model computes
// losses in two threads at once, as it does in one.
#include <gtest/gtest.h>

#include <thread>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/decode/beam_search.h"
#include "heed/decode/forced.h"
#include "heed/models/rnn_seq2seq.h"
#include "support/seq2seq_models.h"

namespace heed {
namespace {

// A test mechanism with memory: general scores plus a pull towards the next position after
// the one it attended to before,
//   e_ij = h_i^T W_a h_j + gamma * alpha_{i-1, j-1},   alpha_i = softmax(e_i)
// (alpha_0 = 0), so each step's weights depend on the whole history of its hypothesis.
class PreviousAlignmentAttention final : public Attention {
 public:
  PreviousAlignmentAttention(const AttentionConfig& c, const Scope& s)
      : Wa_(&s.param("W_a", {c.query_dim, c.memory_dim}, Init::glorot_uniform())) {}
  AttentionState start(Graph& g, const Memory& m) const override {
    AttentionState st;
    st.memory = m;
    st.keys = linear(m.annotations, g.param(*Wa_));  // [B, S, Dq]
    return st;
  }

 protected:
  Attended compute(Graph& g, Var h, AttentionState& st) const override {
    const int64_t B = h.dim(0), S = st.keys.dim(1), D = h.dim(1);
    Var e = reshape(matmul(st.keys, reshape(h, Shape{B, D, 1})), Shape{B, S});  // [B, S]
    if (st.previous.valid()) {
      // alpha_{i-1} shifted one position right: [B, S]
      Tensor shifted = g.zeros(Shape{B, S});
      const float* prev = st.previous.value().data();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 1; j < S; ++j) shifted.data()[b * S + j] = kGamma * prev[b * S + j - 1];
      e = e + g.constant(shifted);
    }
    Var alpha = softmax(e, st.memory.mask);
    return {weighted_sum(alpha, st.memory.annotations), alpha, {}};
  }

 private:
  static constexpr float kGamma = 6.f;
  Parameter* Wa_;  // [Dq, Dm]
};

RnnSeq2SeqConfig small_config() {
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.vocab = testing::kSmallVocab, .embed = 8, .hidden = 8};
  c.tgt_vocab = testing::kSmallVocab;
  c.tgt_embed = 8;
  c.dec_hidden = 16;
  c.attention = AttentionKind::LuongGeneral;  // the Luong decoder: attend after the cell
  return c;
}

std::unique_ptr<Attention> make_previous(const AttentionConfig& c, const Scope& s) {
  return std::make_unique<PreviousAlignmentAttention>(c, s);
}

TEST(AttentionState, BeamHypothesesDecodeAsThemselvesAlone) {
  ParameterStore store;
  Rng rng(31);
  const RnnSeq2Seq model(small_config(), Scope(store, rng), make_previous);
  auto src = testing::random_sources(rng, 6);
  const auto lists = beam_search_n_best(
      model, src, {.beam = 4, .length_penalty = 0.6, .max_len_ratio = 1.0, .n_best = 4});
  int checked = 0, differs_without_history = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    for (const Hypothesis& h : lists[i]) {
      // forced decoding scores the tokens and EOS; a hypothesis cut at the length limit has
      // no EOS, so the rows it has are compared
      const Hypothesis alone = force_decode(model, {src[i]}, {h.tokens}, {.wanted = true})[0];
      const bool cut = h.token_log_probs.size() == h.tokens.size();
      ASSERT_EQ(alone.token_log_probs.size(), h.tokens.size() + 1);
      ASSERT_EQ(h.token_log_probs.size(), h.tokens.size() + (cut ? 0 : 1));
      for (size_t t = 0; t < h.token_log_probs.size(); ++t)
        EXPECT_NEAR(alone.token_log_probs[t], h.token_log_probs[t], 1e-5f)
            << "sentence " << i << ", token " << t;
      if (!cut) {
        EXPECT_NEAR(alone.log_prob, h.log_prob, 1e-4);
      }
      ASSERT_EQ(h.attention.size(), h.token_log_probs.size());
      for (size_t t = 0; t < h.attention.size(); ++t)
        for (size_t j = 0; j < h.attention[t].size(); ++j)
          EXPECT_NEAR(alone.attention[t][j], h.attention[t][j], 1e-5f);
      ++checked;
    }
  }
  EXPECT_GT(checked, 8);
  // the mechanism really reads its history: the same model without it (the plain general
  // score, same weights) scores these outputs differently
  ParameterStore plain_store;
  Rng plain_rng(31);
  const RnnSeq2Seq plain(small_config(), Scope(plain_store, plain_rng));
  for (size_t i = 0; i < src.size(); ++i) {
    const Hypothesis& h = lists[i][0];
    const double a = force_decode(model, {src[i]}, {h.tokens})[0].log_prob;
    const double b = force_decode(plain, {src[i]}, {h.tokens})[0].log_prob;
    differs_without_history += std::abs(a - b) > 1e-4;
  }
  EXPECT_GT(differs_without_history, 0);
}

TEST(AttentionState, TwoThreadsComputeLossesWithOneModel) {
  for (const char* kind : {"bahdanau", "luong", "transformer", "conv"}) {
    testing::SmallSeq2Seq small(kind, 41);
    const Seq2SeqModel& model = *small.model;
    std::vector<Seq2SeqBatch> batches;
    for (int k = 0; k < 8; ++k) {
      auto src = testing::random_sources(small.rng, 5);
      batches.push_back(make_batch(src, src, model.reverse_source()));
    }
    auto losses = [&](size_t first, size_t step) {
      std::vector<float> out;
      Graph g(Mode::Inference);
      for (size_t k = first; k < batches.size(); k += step) {
        out.push_back(model.loss(g, batches[k]).value().data()[0]);
        g.clear();
      }
      return out;
    };
    const std::vector<float> alone = losses(0, 1);
    std::vector<float> even, odd;
    for (int round = 0; round < 20; ++round) {  // many interleavings
      std::thread a([&] { even = losses(0, 2); });
      std::thread b([&] { odd = losses(1, 2); });
      a.join();
      b.join();
      for (size_t k = 0; k < batches.size(); ++k)
        ASSERT_EQ((k % 2 ? odd : even)[k / 2], alone[k]) << kind << ", batch " << k;
    }
  }
}

}  // namespace
}  // namespace heed
