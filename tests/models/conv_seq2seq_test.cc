// ConvS2S (models/conv_seq2seq.h): gradient check of the whole model (with and without weight
// norm); incremental decoding through the per-layer queues equals the teacher-forced decoder at
// every position, padding on both sides, its attention rows distributions over the real source; the
// batch loss is the token-weighted mean of each pair's loss (padding changes nothing); the decoder
// is causal (a later target token changes no earlier logit); the toy reversal task learned end to
// end; the config round-trips through JSON.
#include <gtest/gtest.h>

#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/models/conv_seq2seq.h"
#include "heed/models/registry.h"
#include "support/gradcheck.h"
#include "support/reversal.h"
#include "support/seq2seq_models.h"

namespace heed {
namespace {

ConvSeq2SeqConfig tiny() {
  return {.src_vocab = 9,
          .tgt_vocab = 8,
          .embed = 6,
          .channels = 4,
          .kernel = 3,
          .enc_layers = 2,
          .dec_layers = 2,
          .dropout = 0.f,
          .max_positions = 16};
}

using testing::reversal;

TEST(ConvSeq2Seq, WholeModelGradients) {
  for (bool weight_norm : {false, true}) {
    ParameterStore store;
    Rng init(3);
    ConvSeq2SeqConfig c = tiny();
    c.weight_norm = weight_norm;
    ConvSeq2Seq model(c, Scope(store, init, "m"));
    Rng rng(4);
    auto [src, tgt] = reversal(rng, 3, 2, 5, 8);
    const Seq2SeqBatch b = make_batch(src, tgt, false);
    std::vector<Parameter*> params(store.all().begin(), store.all().end());
    testing::expect_gradients([&](Graph& g, std::vector<Var>&) { return model.loss(g, b, 0.1f); },
                              {}, {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 6},
                              {}, params);
  }
}

// Teacher-forced logits of tgt_in under `model` [B, T, V], on a fresh inference graph.
Tensor teacher_forced(const ConvSeq2Seq& model, const Seq2SeqBatch& b, Graph& g) {
  return model
      .decode(g, b.tgt_in, b.T, target_lengths(b), model.encode(g, b.src, b.S, b.src_lengths))
      .value();
}

// step() through the queues gives, at every position, the teacher-forced decoder's logits for
// that position; each layer's attention weights sum to 1 over the real source positions.
TEST(ConvSeq2Seq, IncrementalDecodingEqualsTheTeacherForcedDecoder) {
  ParameterStore store;
  Rng init(5);
  ConvSeq2Seq model(tiny(), Scope(store, init, "m"));
  Rng rng(6);
  auto [src, tgt] = reversal(rng, 4, 2, 7, 8);  // different lengths: padding on both sides
  const Seq2SeqBatch b = make_batch(src, tgt, false);
  Graph full(Mode::Inference);
  const Tensor logits = teacher_forced(model, b, full);  // [B, T, V]
  const int64_t V = 8;
  Graph g(Mode::Inference);
  auto st = model.start(g, b.src, b.S, b.src_lengths);
  for (int64_t t = 0; t < b.T; ++t) {
    std::vector<int32_t> prev(b.tgt_in.begin() + t * b.B, b.tgt_in.begin() + (t + 1) * b.B);
    auto s = model.step(g, prev, st, Scores::LogitsOnly, static_cast<int>(t % 2));
    ASSERT_EQ(s.weights.shape(), (Shape{b.B, 1, 1, b.S}));
    for (int64_t i = 0; i < b.B; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < b.S; ++j) {
        const float w = s.weights.data()[i * b.S + j];
        if (j >= b.src_lengths[i]) {
          EXPECT_EQ(w, 0.f) << "padding attended";
        }
        sum += w;
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
      if (b.tgt_out[t * b.B + i] == Vocab::kPad) continue;  // past its end
      for (int64_t v = 0; v < V; ++v)
        ASSERT_NEAR(s.logits.value().data()[i * V + v], logits.data()[(i * b.T + t) * V + v], 1e-4f)
            << "sequence " << i << ", position " << t;
    }
  }
}

// The decoder reads only earlier target tokens: changing y_t leaves every logit before t+1 as
// it was (bit for bit), and changes a later one.
TEST(ConvSeq2Seq, TheDecoderIsCausal) {
  ParameterStore store;
  Rng init(7);
  ConvSeq2Seq model(tiny(), Scope(store, init, "m"));
  const std::vector<std::vector<int32_t>> src = {{4, 5, 6, 7}};
  std::vector<std::vector<int32_t>> tgt = {{4, 5, 6, 7, 4, 5}};
  Graph g1(Mode::Inference), g2(Mode::Inference);
  const Tensor a = teacher_forced(model, make_batch(src, tgt, false), g1);
  tgt[0][3] = 6;  // tgt_in position 4 (BOS first)
  const Tensor b = teacher_forced(model, make_batch(src, tgt, false), g2);
  const int64_t V = 8;
  for (int64_t t = 0; t < 7; ++t) {
    bool same = true;
    for (int64_t v = 0; v < V; ++v) same &= a.data()[t * V + v] == b.data()[t * V + v];
    EXPECT_EQ(same, t < 4) << "position " << t;
  }
}

// The batch is padded on both sides: its loss is the token-weighted mean of each pair's loss
// computed alone (no padding at all).
TEST(ConvSeq2Seq, BatchLossEqualsTheLossesOfEachPairAlone) {
  ParameterStore store;
  Rng init(8);
  ConvSeq2Seq model(tiny(), Scope(store, init, "m"));
  Rng rng(9);
  auto [src, tgt] = reversal(rng, 5, 1, 7, 8);
  const auto [batch, pairs] = testing::batch_and_pair_losses(model, src, tgt);
  EXPECT_NEAR(batch, pairs, 1e-5);
}

TEST(ConvSeq2Seq, LearnsReversalWithVariableLengths) {
  ParameterStore store;
  Rng rng(10);
  ConvSeq2Seq model({.src_vocab = 12,
                     .tgt_vocab = 12,
                     .embed = 32,
                     .channels = 64,
                     .kernel = 3,
                     .enc_layers = 3,
                     .dec_layers = 3,
                     .dropout = 0.f,
                     .max_positions = 16},
                    Scope(store, rng, "m"));
  testing::train_reversal(model, store, rng, 800, 1.f, [](int) { return 2e-3f; });
  EXPECT_GT(testing::reversal_accuracy(model), 0.9);
}

TEST(ConvSeq2Seq, ConfigRoundTripsThroughJsonAndTheRegistry) {
  ConvSeq2SeqConfig c = tiny();
  c.weight_norm = true;
  c.dropout = 0.3f;
  EXPECT_EQ(ConvSeq2SeqConfig::from_json(c.to_json()).to_json(), c.to_json());
  const ModelFamily& f = model_family("conv");
  EXPECT_EQ(f.role, ModelRole::Seq2Seq);
  ParameterStore store;
  Rng init(1);
  EXPECT_NE(dynamic_cast<ConvSeq2Seq*>(make_seq2seq_model(c.to_json(), Scope(store, init)).get()),
            nullptr);
  nlohmann::json bad = c.to_json();
  bad.erase("kernel");
  EXPECT_THROW(ConvSeq2SeqConfig::from_json(bad), Error);
  c.kernel = 4;  // an even kernel cannot be centred
  EXPECT_THROW(ConvSeq2Seq(c, Scope(store, init)), Error);
}

}  // namespace
}  // namespace heed
