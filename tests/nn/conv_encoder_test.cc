// The convolutional sequence encoder: its states [B, S, C]; a sequence encoded alone equals the
// same sequence in a padded batch (centred convolutions read padding as zero); causal: the state
// at t does not change when later tokens do, centred: it does within the receptive field;
// gradients of every parameter; an RNN decoder over it learns the reversal task, and JSON
// round-trips the config.
#include <gtest/gtest.h>

#include <cstring>

#include "heed/models/rnn_seq2seq.h"
#include "heed/nn/sequence_encoder.h"
#include "support/gradcheck.h"
#include "support/reversal.h"

namespace heed {
namespace {

ConvEncoderConfig small(bool causal) {
  return {.vocab = 12,
          .embed = 8,
          .channels = 6,
          .kernel = 3,
          .dilations = {1, 2},
          .causal = causal,
          .max_positions = 32};
}

// ids time-major [S, B] for sequences of different lengths, padded with 0
std::vector<int32_t> time_major(const std::vector<std::vector<int32_t>>& seqs, int64_t S) {
  const auto B = static_cast<int64_t>(seqs.size());
  std::vector<int32_t> ids(static_cast<size_t>(S * B), 0);
  for (int64_t b = 0; b < B; ++b)
    for (size_t t = 0; t < seqs[b].size(); ++t) ids[t * B + b] = seqs[b][t];
  return ids;
}

Tensor encode(const SequenceEncoder& e, const std::vector<std::vector<int32_t>>& seqs) {
  int64_t S = 0;
  std::vector<int32_t> lengths;
  for (const auto& s : seqs) {
    S = std::max<int64_t>(S, static_cast<int64_t>(s.size()));
    lengths.push_back(static_cast<int32_t>(s.size()));
  }
  Graph g(Mode::Inference);
  return e.encode(g, time_major(seqs, S), S, lengths, {}).states.value().clone();
}

TEST(ConvEncoder, PaddingChangesNoRealState) {
  for (bool causal : {true, false}) {
    ParameterStore store;
    Rng rng(2);
    auto e = make_sequence_encoder(small(causal), Scope(store, rng, "m"));
    EXPECT_EQ(e->width(), 6);
    const std::vector<int32_t> a = {4, 5, 6}, b = {7, 8, 9, 10, 11, 4, 5};
    const Tensor alone = encode(*e, {a});
    const Tensor batch = encode(*e, {b, a});  // a padded to 7 in row 1
    ASSERT_EQ(batch.shape(), (Shape{2, 7, 6}));
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t c = 0; c < 6; ++c)
        EXPECT_NEAR(batch.data()[(7 + t) * 6 + c], alone.data()[t * 6 + c], 1e-6) << causal;
  }
}

TEST(ConvEncoder, CausalStatesIgnoreLaterTokens) {
  for (bool causal : {true, false}) {
    ParameterStore store;
    Rng rng(3);
    auto e = make_sequence_encoder(small(causal), Scope(store, rng, "m"));
    const Tensor x = encode(*e, {{4, 5, 6, 7, 8, 9, 10, 11}});
    const Tensor y = encode(*e, {{4, 5, 6, 7, 11, 11, 4, 4}});  // from position 4 on
    const bool same_before = std::memcmp(x.data(), y.data(), sizeof(float) * 4 * 6) == 0;
    EXPECT_EQ(same_before, causal);  // centred: position 3 sees 4 (receptive field 7)
  }
  EXPECT_EQ(small(true).receptive_field(), 7);
}

TEST(ConvEncoder, Gradients) {
  ParameterStore store;
  Rng rng(4);
  auto e = make_sequence_encoder(small(false), Scope(store, rng, "m"));
  const std::vector<int32_t> ids = time_major({{4, 5, 6, 7}, {8, 9}}, 4), lengths = {4, 2};
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>&) {
        return e->encode(g, ids, 4, lengths, {.summary = true}).summary;
      },
      {}, {.eps = 1e-2f, .rtol = 2e-2f, .atol = 1e-3f, .max_entries = 12}, {}, params);
}

TEST(ConvEncoder, JsonRoundTrip) {
  ConvEncoderConfig c = small(true);
  c.dropout = 0.25f;
  nlohmann::json j;
  encoder_to_json(c, j);
  const auto back = std::get<ConvEncoderConfig>(encoder_from_json(j));
  EXPECT_EQ(back.to_json(), c.to_json());
  EXPECT_EQ(back.dilations, (std::vector<int64_t>{1, 2}));
}

TEST(ConvEncoder, AnRnnDecoderOverItLearnsReversal) {
  ParameterStore store;
  Rng rng(10);
  RnnSeq2SeqConfig c;
  c.encoder = ConvEncoderConfig{.vocab = 12,
                                .embed = 16,
                                .channels = 32,
                                .kernel = 3,
                                .dilations = {1, 2, 4},
                                .causal = false,
                                .max_positions = 16};
  c.tgt_vocab = 12;
  c.tgt_embed = 16;
  c.dec_hidden = 64;
  c.attention = AttentionKind::Bahdanau;
  c.attn_dim = 32;
  RnnSeq2Seq model(c, Scope(store, rng, "m"));
  testing::train_reversal(model, store, rng, 400, 5.f, [](int) { return 5e-3f; });
  EXPECT_GT(testing::reversal_accuracy(model), 0.9);
  EXPECT_NE(c.describe().find("receptive field 15"), std::string::npos) << c.describe();
}

}  // namespace
}  // namespace heed
