// Syntactic attention as an encoder layer (Kim et al. 2017, section 3.3): finite-difference
// gradients w.r.t. the states and every parameter (the root, W, u, W_o, b_o), each word's parent
// a distribution over the root and the other words, padding that changes nothing in a row, and
// the encoder-decoder and the classifier with the layer: whole-model gradients, a config that
// round-trips, no online decoding, the reversal task learned.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/sentence_classifier.h"
#include "heed/nn/syntactic_attention.h"
#include "support/gradcheck.h"
#include "support/reversal.h"

namespace heed {
namespace {

TEST(SyntacticAttention, GradientsOfStatesAndParameters) {
  ParameterStore store;
  Rng rng(4);
  SyntacticAttention layer(3, Scope(store, rng, "s"));
  for (Parameter* p : store.all())  // u and b_o start at 0: move them off it
    p->value = testing::random_tensor(p->value.shape(), rng, -1.f, 1.f);
  const std::vector<int32_t> lengths = {4, 2};
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>& x) { return layer.forward(g, x[0], lengths).states; },
      {testing::random_tensor({2, 4, 3}, rng)}, {.eps = 1e-2f, .rtol = 2e-2f, .atol = 1e-3f}, {},
      params);
}

TEST(SyntacticAttention, ParentsAreDistributionsAndPaddingIsInert) {
  ParameterStore store;
  Rng rng(8);
  SyntacticAttention layer(5, Scope(store, rng, "s"));
  const Tensor x = testing::random_tensor({2, 6, 5}, rng);
  Tensor y = x.clone();  // row 1 has 3 words: its padding rows changed
  for (int64_t t = 3; t < 6; ++t)
    for (int64_t d = 0; d < 5; ++d) y.data()[(6 + t) * 5 + d] = 7.f;
  const std::vector<int32_t> lengths = {6, 3};
  Graph g(Mode::Inference);
  SyntacticAttention::Output a = layer.forward(g, g.constant(x), lengths);
  SyntacticAttention::Output b = layer.forward(g, g.constant(y), lengths);
  const float* mu = a.parents.value().data();  // [2, 7, 6]
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t m = 0; m < lengths[static_cast<size_t>(r)]; ++m) {
      double column = 0;
      for (int64_t h = 0; h <= 6; ++h) column += mu[(r * 7 + h) * 6 + m];
      EXPECT_NEAR(column, 1.0, 1e-5) << "row " << r << " word " << m + 1;
      EXPECT_EQ(mu[(r * 7 + m + 1) * 6 + m], 0.f) << "a word is not its own parent";
    }
  for (int64_t t = 0; t < 3; ++t)  // the real words of row 1: the same states and parents
    for (int64_t d = 0; d < 5; ++d)
      EXPECT_NEAR(a.states.value().data()[(6 + t) * 5 + d],
                  b.states.value().data()[(6 + t) * 5 + d], 1e-6f);
}

RnnSeq2SeqConfig reversal_model() {
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.vocab = 12, .embed = 16, .hidden = 32, .bidirectional = true};
  c.tgt_vocab = 12;
  c.tgt_embed = 16;
  c.dec_hidden = 64;
  c.attention = AttentionKind::LuongGeneral;
  c.attn_dim = 32;
  c.syntactic_attention = true;
  return c;
}

TEST(SyntacticAttention, EncoderDecoderGradients) {
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.vocab = 9, .embed = 4, .hidden = 3, .bidirectional = true};
  c.tgt_vocab = 8;
  c.tgt_embed = 4;
  c.dec_hidden = 6;
  c.attention = AttentionKind::Structured;
  c.syntactic_attention = true;
  ParameterStore store;
  Rng rng(12);
  RnnSeq2Seq model(c, Scope(store, rng, "m"));
  EXPECT_TRUE(store.contains("m/syntactic/W"));
  EXPECT_TRUE(store.contains("m/syntactic/root"));
  const Seq2SeqBatch b =
      make_batch({{4, 5, 6, 7}, {8, 4}, {5, 6, 7}}, {{5, 6}, {7}, {4, 4, 5}}, false);
  std::vector<Parameter*> params;
  for (Parameter* p : store.all())
    if (p->name.starts_with("m/syntactic/")) params.push_back(p);
  testing::expect_gradients([&](Graph& g, std::vector<Var>&) { return model.loss(g, b); }, {},
                            {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 8}, {},
                            params);
}

TEST(SyntacticAttention, ConfigsRoundTripThroughJson) {
  const RnnSeq2SeqConfig c = reversal_model();
  EXPECT_TRUE(RnnSeq2SeqConfig::from_json(c.to_json()).syntactic_attention);
  RnnSeq2SeqConfig plain = c;
  plain.syntactic_attention = false;
  EXPECT_FALSE(plain.to_json().contains("syntactic_attention")) << "older models' config.json";
  EXPECT_FALSE(RnnSeq2SeqConfig::from_json(plain.to_json()).syntactic_attention);
  ClassifierConfig k;
  k.syntactic_attention = true;
  EXPECT_TRUE(SelfAttentiveClassifier::from_json(k.to_json()).syntactic_attention);
}

// Its tree spans the whole source: a model with it does not decode online, whatever else allows it.
TEST(SyntacticAttention, KeepsAModelFromDecodingOnline) {
  RnnSeq2SeqConfig c = reversal_model();
  std::get<RnnEncoderConfig>(c.encoder).bidirectional = false;
  c.wait_k = 3;
  c.syntactic_attention = false;
  EXPECT_EQ(c.online_policy().kind, OnlinePolicy::Kind::WaitK);
  c.syntactic_attention = true;
  EXPECT_EQ(c.online_policy().kind, OnlinePolicy::Kind::ReadAll);
  EXPECT_NE(c.online_policy().reason.find("syntactic attention"), std::string::npos);
}

TEST(SyntacticAttention, EncoderDecoderLearnsReversal) {
  ParameterStore store;
  Rng rng(10);
  RnnSeq2Seq model(reversal_model(), Scope(store, rng, "m"));
  testing::train_reversal(
      model, store, rng, 400, 5.f, [](int) { return 5e-3f; }, false);
  EXPECT_GT(testing::reversal_accuracy(model, false), 0.9);
}

}  // namespace
}  // namespace heed
