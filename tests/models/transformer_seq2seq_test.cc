// The Transformer encoder-decoder: gradient check of the whole model, KV-cached incremental
// decoding equal to full recomputation of the prefix (pre- and post-LN, both position kinds),
// and a toy task (reversal, variable lengths, padding) learned end to end.
#include <gtest/gtest.h>

#include <algorithm>

#include "heed/data/vocab.h"
#include "heed/models/transformer_seq2seq.h"
#include "heed/train/optimizer.h"
#include "support/gradcheck.h"
#include "support/reversal.h"
#include "support/seq2seq_models.h"

namespace heed {
namespace {

TransformerSeq2SeqConfig tiny(NormPlacement norm, bool learned) {
  TransformerSeq2SeqConfig c;
  c.src_vocab = 9;
  c.tgt_vocab = 8;
  // GELU: smooth, so finite differences do not straddle ReLU's kink (ReLU has its own check)
  c.layer = {.d_model = 8,
             .heads = 2,
             .ff = 12,
             .dropout = 0.f,
             .norm = norm,
             .activation = FfnActivation::Gelu};
  c.enc_layers = 2;
  c.dec_layers = 2;
  c.positions = learned ? Positions::Learned : Positions::Sinusoidal;
  c.max_positions = 16;
  return c;
}

using testing::reversal;

// Greedy decoding through the cached step(): tokens before EOS.
std::vector<std::vector<int32_t>> greedy(const TransformerSeq2Seq& m, const Seq2SeqBatch& b,
                                         int64_t max_len) {
  Graph g(Mode::Inference);
  auto st = m.start(g, b.src, b.S, b.src_lengths, max_len);
  std::vector<int32_t> prev(b.B, Vocab::kBos);
  std::vector<std::vector<int32_t>> out(b.B);
  std::vector<bool> done(b.B, false);
  for (int64_t t = 0; t < max_len; ++t) {
    auto s = m.step(g, prev, st, TransformerSeq2Seq::Scores::LogitsOnly);
    const int64_t V = s.logits.dim(1);
    for (int64_t i = 0; i < b.B; ++i) {
      const float* row = s.logits.value().data() + i * V;
      prev[i] = static_cast<int32_t>(std::max_element(row, row + V) - row);
      if (!done[i] && prev[i] == Vocab::kEos) done[i] = true;
      if (!done[i]) out[i].push_back(prev[i]);
    }
  }
  return out;
}

class EachVariant : public ::testing::TestWithParam<std::tuple<NormPlacement, bool>> {};

TEST_P(EachVariant, WholeModelGradients) {
  const auto [norm, learned] = GetParam();
  ParameterStore store;
  Rng init(3);
  TransformerSeq2Seq model(tiny(norm, learned), Scope(store, init, "m"));
  Rng rng(4);
  auto [src, tgt] = reversal(rng, 3, 2, 5, 8);
  const Seq2SeqBatch b = make_batch(src, tgt, false);
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  testing::expect_gradients([&](Graph& g, std::vector<Var>&) { return model.loss(g, b, 0.1f); }, {},
                            {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 6}, {},
                            params);
}

// step() with the key/value caches gives, at every position, the logits that the full
// teacher-forced decoder computes for that position from the whole prefix.
TEST_P(EachVariant, CachedDecodingEqualsFullRecomputation) {
  const auto [norm, learned] = GetParam();
  ParameterStore store;
  Rng init(5);
  TransformerSeq2Seq model(tiny(norm, learned), Scope(store, init, "m"));
  Rng rng(6);
  auto [src, tgt] = reversal(rng, 4, 2, 7, 8);  // different source lengths: padding
  const Seq2SeqBatch b = make_batch(src, tgt, false);
  Graph full(Mode::Inference);
  std::vector<int32_t> tgt_len, offset;  // packed target rows: sequence i from offset[i]
  for (const auto& y : tgt) {
    offset.push_back(tgt_len.empty() ? 0 : offset.back() + tgt_len.back());
    tgt_len.push_back(static_cast<int32_t>(y.size()) + 1);  // BOS y_1 .. y_n
  }
  const Packing src_p = make_packing(full, b.src_lengths, b.S);
  Var logits = model.output(model.decode(full, b.tgt_in, make_packing(full, tgt_len, b.T),
                                         model.encode(full, b.src, src_p), src_p,
                                         /*wait_k=*/0));  // [N_t, V]
  const int64_t V = logits.dim(1);
  Graph g(Mode::Inference);
  auto st = model.start(g, b.src, b.S, b.src_lengths, b.T);
  for (int64_t t = 0; t < b.T; ++t) {
    std::vector<int32_t> prev(b.tgt_in.begin() + t * b.B, b.tgt_in.begin() + (t + 1) * b.B);
    auto s = model.step(g, prev, st, TransformerSeq2Seq::Scores::LogitsOnly, 1);
    ASSERT_EQ(s.weights.shape(), (Shape{b.B, 2, 1, b.S}));
    for (int64_t i = 0; i < b.B; ++i) {
      if (t >= tgt_len[i]) continue;  // past its end: no teacher-forced position to compare
      for (int64_t v = 0; v < V; ++v)
        ASSERT_NEAR(s.logits.value().data()[i * V + v],
                    logits.value().data()[(offset[i] + t) * V + v], 1e-4f)
            << "sequence " << i << ", position " << t;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Norms, EachVariant,
                         ::testing::Combine(::testing::Values(NormPlacement::Pre,
                                                              NormPlacement::Post),
                                            ::testing::Bool()));

TEST(TransformerSeq2Seq, LearnsReversalWithVariableLengths) {
  ParameterStore store;
  Rng rng(10);
  TransformerSeq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = 12;
  c.layer = {.d_model = 32, .heads = 4, .ff = 64, .dropout = 0.f, .norm = NormPlacement::Pre};
  c.enc_layers = c.dec_layers = 2;
  c.max_positions = 16;
  TransformerSeq2Seq model(c, Scope(store, rng, "m"));
  // 1,000 steps: 0.965-0.995 of the sequences right over seeds 10-15; after 500 it was 0.89-0.95,
  // too close to the bar for a change of float summation order not to cross it
  testing::train_reversal(model, store, rng, 1000, 1.f, [](int step) {
    return step < 50 ? 3e-3f * static_cast<float>(step + 1) / 50 : 3e-3f;  // a short warmup
  });
  Rng test_rng(99);
  auto [src, tgt] = reversal(test_rng, 200, 2, 6, 12);
  auto hyp = greedy(model, make_batch(src, tgt, false), 10);
  int right = 0;
  for (size_t i = 0; i < hyp.size(); ++i) right += hyp[i] == tgt[i];
  EXPECT_GT(right / 200.0, 0.9);
}

// The batch computes on packed positions: its loss is the token-weighted mean of each pair's
// loss computed alone (no padding at all), so padding changes nothing.
TEST(TransformerSeq2Seq, BatchLossEqualsTheLossesOfEachPairAlone) {
  ParameterStore store;
  Rng init(8);
  TransformerSeq2Seq model(tiny(NormPlacement::Pre, false), Scope(store, init, "m"));
  Rng rng(9);
  auto [src, tgt] = reversal(rng, 5, 1, 7, 8);
  const auto [batch, pairs] = testing::batch_and_pair_losses(model, src, tgt);
  EXPECT_NEAR(batch, pairs, 1e-5);
}

TEST(TransformerSeq2Seq, ConfigRoundTripsThroughJson) {
  TransformerSeq2SeqConfig c = tiny(NormPlacement::Post, true);
  c.layer.activation = FfnActivation::Relu;
  c.tie_output = false;
  EXPECT_EQ(TransformerSeq2SeqConfig::from_json(c.to_json()).to_json(), c.to_json());
}

// Monotonic heads trained against latency keep their latency terms through the JSON (a resumed
// run trains as it began); an unknown gather is an error naming the key, a negative weight an
// error.
TEST(TransformerSeq2Seq, MonotonicLatencyConfigRoundTripsThroughJson) {
  TransformerSeq2SeqConfig c = tiny(NormPlacement::Post, false);
  c.layer.monotonic = MonotonicHeadsConfig{
      .chunk = 3,
      .bias = -2.f,
      .head_drop = 0.25f,
      .layers = 1,
      .latency = {
          .weight = 0.05f, .gather = LatencyGather::Weighted, .var_weight = 0.01f, .warmup = 300}};
  const TransformerSeq2SeqConfig back = TransformerSeq2SeqConfig::from_json(c.to_json());
  ASSERT_TRUE(back.layer.monotonic.has_value());
  EXPECT_EQ(back.layer.monotonic->head_drop, 0.25f);
  EXPECT_EQ(back.layer.monotonic->layers, 1);
  EXPECT_EQ(back.layer.monotonic->latency.gather, LatencyGather::Weighted);
  EXPECT_EQ(back.layer.monotonic->latency.var_weight, 0.01f);
  EXPECT_EQ(back.layer.monotonic->latency.warmup, 300);
  EXPECT_EQ(back.to_json(), c.to_json());
  nlohmann::json j = c.to_json();
  j["monotonic_latency_gather"] = "max";
  try {
    TransformerSeq2SeqConfig::from_json(j);
    FAIL() << "an unknown gather was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("monotonic_latency_gather"), std::string::npos)
        << e.what();
  }
  j = c.to_json();  // a negative weight is refused as the rnn's is (one reader for both)
  j["monotonic_latency_var"] = -0.5;
  EXPECT_THROW(TransformerSeq2SeqConfig::from_json(j), Error);
}

// Monotonic heads in the top decoder layer only (Inaguma et al. 2020's pruning of the lower
// layers): the lower layer has no cross-attention parameters, the training loss's latency term
// is the top layer's heads' mean expected delay (between 1 token and the longest source),
// decoding cannot report the lower layer's attention, and more layers than the decoder has are
// refused.
TEST(TransformerSeq2Seq, MonotonicHeadsInTheTopLayersOnly) {
  TransformerSeq2SeqConfig c = tiny(NormPlacement::Post, false);
  c.layer.monotonic = MonotonicHeadsConfig{.bias = -1.f, .noise = 0.f, .layers = 1};
  ParameterStore store;
  Rng rng(5);
  TransformerSeq2Seq m(c, Scope(store, rng));
  EXPECT_EQ(c.first_attending(), 1);
  bool lower = false, upper = false;
  for (const Parameter* p : store.all()) {
    lower = lower || p->name.find("decoder/layer_0/cross_attn") != std::string::npos;
    upper = upper || p->name.find("decoder/layer_1/cross_attn/r") != std::string::npos;
  }
  EXPECT_FALSE(lower) << "the lower layer has cross-attention parameters";
  EXPECT_TRUE(upper) << "the top layer has no monotonic heads";
  EXPECT_EQ(m.decoder_heads().first, 1);
  // the latency term of one layer's heads: with weight 1 minus without, >= 1 token (each
  // head reads at least one token) and at most the longest source
  Rng data(3);
  auto [src, tgt] = reversal(data, 4, 2, 6, 8);
  const Seq2SeqBatch b = make_batch(src, tgt, false);
  TransformerSeq2SeqConfig weighted = c;
  weighted.layer.monotonic->latency.weight = 1.f;
  ParameterStore store2;
  Rng rng2(5);
  TransformerSeq2Seq mw(weighted, Scope(store2, rng2));
  Graph g1(Mode::Train), g2(Mode::Train);
  const float term = mw.loss(g2, b).value().data()[0] - m.loss(g1, b).value().data()[0];
  EXPECT_GE(term, 1.f - 1e-4f);
  EXPECT_LE(term, static_cast<float>(b.S) + 1e-4f);
  Graph g(Mode::Inference);
  EXPECT_THROW(m.start_decoding(g, b, 8, {.wanted = true, .layer = 0, .head = -1}), Error);
  EXPECT_NO_THROW(m.start_decoding(g, b, 8, {.wanted = true, .layer = 1, .head = -1}));
  TransformerSeq2SeqConfig more = c;
  more.layer.monotonic->layers = 3;
  ParameterStore store3;
  EXPECT_THROW(TransformerSeq2Seq(more, Scope(store3, rng)), Error);
}

// The heads' latency term follows its warm-up: none at update 0, half of it halfway, all of it
// from the warm-up's end (the training loss against the same model's without the term).
TEST(TransformerSeq2Seq, LatencyTermFollowsItsWarmup) {
  Rng data(3);
  auto [src, tgt] = reversal(data, 3, 2, 5, 8);
  Seq2SeqBatch b = make_batch(src, tgt, false);
  const auto loss = [&](float lambda, int64_t step) {
    TransformerSeq2SeqConfig c = tiny(NormPlacement::Post, false);
    c.layer.causal_encoder = true;
    c.layer.monotonic = MonotonicHeadsConfig{
        .chunk = 0, .bias = 0.f, .noise = 0.f, .latency = {.weight = lambda, .warmup = 4}};
    ParameterStore store;
    Rng rng(5);
    TransformerSeq2Seq model(c, Scope(store, rng, "m"));
    Graph g(Mode::Train);
    b.step = step;
    return double{model.loss(g, b, 0.f).value().data()[0]};
  };
  const double full = loss(0.5f, 4) - loss(0.f, 4);
  ASSERT_GT(full, 0.1);  // the heads read something: a delay of at least one token each
  EXPECT_EQ(loss(0.5f, 0), loss(0.f, 0));
  EXPECT_NEAR(loss(0.5f, 2) - loss(0.f, 2), full / 2, 1e-5 * full);
  EXPECT_NEAR(loss(0.5f, 40) - loss(0.f, 40), full, 1e-5 * full);
}

}  // namespace
}  // namespace heed
