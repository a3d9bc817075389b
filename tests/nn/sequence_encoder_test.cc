// The sequence encoder interface: each encoder's states and summary have the documented
// shapes, ignore padding, and carry gradients (finite differences through the embeddings'
// consumers); the BiRNN encoder is the RNN encoder (same parameters, same values); an RNN
// encoder-decoder with a Transformer encoder instead of its BiRNN learns reversal and writes
// and reads its config.json.
#include <gtest/gtest.h>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/decode/greedy.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/nn/sequence_encoder.h"
#include "heed/train/optimizer.h"
#include "support/gradcheck.h"
#include "support/reversal.h"

namespace heed {
namespace {

const std::vector<EncoderConfig> kEncoders = {
    RnnEncoderConfig{.cell = CellKind::Lstm, .vocab = 11, .embed = 4, .hidden = 3},
    // GELU: smooth, so finite differences do not straddle ReLU's kink
    TransformerEncoderConfig{
        .vocab = 11,
        .layer =
            {.d_model = 8, .heads = 2, .ff = 12, .dropout = 0.f, .activation = FfnActivation::Gelu},
        .layers = 2,
        .max_positions = 16}};

class EachEncoder : public ::testing::TestWithParam<size_t> {};

// ids [S, B] time-major: B = 3 sequences of lengths 5, 2, 1
constexpr int64_t S = 5, B = 3;
const std::vector<int32_t> kLengths = {5, 2, 1};
std::vector<int32_t> ids_with_padding(int32_t pad) {
  std::vector<int32_t> ids(S * B);
  for (int64_t t = 0; t < S; ++t)
    for (int64_t b = 0; b < B; ++b)
      ids[t * B + b] = t < kLengths[b] ? static_cast<int32_t>(4 + (t * 3 + b) % 7) : pad;
  return ids;
}

TEST_P(EachEncoder, ShapesAndPaddingInvariance) {
  ParameterStore store;
  Rng rng(5);
  auto enc = make_sequence_encoder(kEncoders[GetParam()], Scope(store, rng, "m"));
  Graph g(Mode::Inference);
  auto a = enc->encode(g, ids_with_padding(Vocab::kPad), S, kLengths, {.summary = true});
  auto b = enc->encode(g, ids_with_padding(7), S, kLengths, {.summary = true});  // other padding
  const int64_t D = enc->width();
  EXPECT_EQ(a.states.shape(), (Shape{B, S, D}));
  EXPECT_EQ(a.summary.shape(), (Shape{B, D}));
  for (int64_t n = 0; n < B; ++n) {
    for (int64_t t = 0; t < kLengths[n]; ++t)
      for (int64_t d = 0; d < D; ++d)
        EXPECT_NEAR(a.states.value().data()[(n * S + t) * D + d],
                    b.states.value().data()[(n * S + t) * D + d], 1e-6f);
    for (int64_t d = 0; d < D; ++d)
      EXPECT_NEAR(a.summary.value().data()[n * D + d], b.summary.value().data()[n * D + d], 1e-6f);
  }
}

TEST_P(EachEncoder, GradientsOfEveryParameter) {
  ParameterStore store;
  Rng rng(6);
  auto enc = make_sequence_encoder(kEncoders[GetParam()], Scope(store, rng, "m"));
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  const auto ids = ids_with_padding(Vocab::kPad);
  Rng probe_rng(8);
  // a fixed random read-out of the real positions and the summary, so every output counts
  const Tensor probe = testing::random_tensor({B, S, enc->width()}, probe_rng);
  Tensor mask = Tensor::zeros(Shape{B, S, 1});
  for (int64_t n = 0; n < B; ++n)
    for (int64_t t = 0; t < S; ++t) mask.data()[n * S + t] = t < kLengths[n] ? 1.f : 0.f;
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>&) {
        auto o = enc->encode(g, ids, S, kLengths, {.summary = true});
        Var read = sum(mul(mul(o.states, g.constant(probe)), g.constant(mask)), 1);  // [B, D]
        return concat({read, o.summary}, 1);
      },
      {}, {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 16}, {}, params);
}

INSTANTIATE_TEST_SUITE_P(Encoders, EachEncoder, ::testing::Values(0, 1), [](const auto& info) {
  return info.param == 0 ? "birnn" : "transformer";
});

TEST(SequenceEncoder, TheBiRnnIsTheRnnEncoder) {
  const RnnEncoderConfig c{.vocab = 11, .embed = 4, .hidden = 3, .layers = 2};
  ParameterStore a_store, b_store;
  Rng a_rng(9), b_rng(9);
  auto wrapped = make_sequence_encoder(c, Scope(a_store, a_rng, "m"));
  RnnEncoder plain(c, Scope(b_store, b_rng, "m") / "encoder");
  ASSERT_EQ(a_store.all().size(), b_store.all().size());
  for (size_t i = 0; i < a_store.all().size(); ++i)
    EXPECT_EQ(a_store.all()[i]->name, b_store.all()[i]->name);  // saved models load as before
  Graph g(Mode::Inference);
  const auto ids = ids_with_padding(Vocab::kPad);
  auto x = wrapped->encode(g, ids, S, kLengths, {.summary = true});
  auto y = plain.forward(g, ids, S, kLengths);
  const auto xs = x.states.value().span(), ys = y.annotations.value().span();
  EXPECT_TRUE(std::equal(xs.begin(), xs.end(), ys.begin(), ys.end()));
  const auto summary = concat({y.final_fwd, y.final_bwd}, 1).value().span();
  const auto xsum = x.summary.value().span();
  EXPECT_TRUE(std::equal(xsum.begin(), xsum.end(), summary.begin(), summary.end()));
}

TEST(SequenceEncoder, AnRnnDecoderLearnsOverATransformerEncoder) {
  ParameterStore store;
  Rng rng(10);
  RnnSeq2SeqConfig c;
  c.encoder = TransformerEncoderConfig{
      .vocab = 12, .layer = {.d_model = 32, .heads = 4, .ff = 64, .dropout = 0.f}, .layers = 2};
  c.tgt_vocab = 12;
  c.tgt_embed = 16;
  c.dec_hidden = 64;
  c.attention = AttentionKind::Bahdanau;
  c.attn_dim = 32;
  EXPECT_EQ(RnnSeq2SeqConfig::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_EQ(c.to_json().at("encoder").at("kind"), "transformer");
  RnnSeq2Seq model(c, Scope(store, rng, "m"));
  testing::train_reversal(model, store, rng, 400, 5.f, [](int) { return 3e-3f; });
  EXPECT_GT(testing::reversal_accuracy(model), 0.9);
}

}  // namespace
}  // namespace heed
