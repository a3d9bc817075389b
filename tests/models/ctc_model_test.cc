// The CTC model (models/ctc.h): a toy monotonic transduction learned end to end, its loss
// against the op on its own frame logits, upsampling, the config's round trip, the gradient of
// the whole model, and the alignment picture's rows.
#include <gtest/gtest.h>

#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/ctc.h"
#include "heed/data/vocab.h"
#include "heed/decode/beam_search.h"
#include "heed/decode/ctc_search.h"
#include "heed/decode/forced.h"
#include "heed/models/registry.h"
#include "heed/train/optimizer.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

constexpr int32_t S0 = Vocab::kSpecials;  // the first ordinary id

// The fixed table of the toy task: source symbol S0 + i -> 0, 1 or 2 target symbols (a repeat
// among them, which needs a blank between the two: "e e" is X _ X _ X _ X, so the model gets
// four positions per source symbol and every pair can be aligned).
const std::vector<std::vector<int32_t>> kTable = {
    {},                // a -> nothing
    {S0},              // b -> X
    {S0 + 1, S0 + 2},  // c -> Y Z
    {S0 + 2},          // d -> Z
    {S0, S0},          // e -> X X
    {S0 + 1, S0},      // f -> Y X
};

std::pair<std::vector<std::vector<int32_t>>, std::vector<std::vector<int32_t>>> transduction(
    Rng& rng, int64_t n) {
  std::vector<std::vector<int32_t>> src, tgt;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int32_t> s, t;
    const int64_t len = 2 + rng.below(6);
    for (int64_t k = 0; k < len; ++k) {
      const auto sym = static_cast<size_t>(rng.below(static_cast<int64_t>(kTable.size())));
      s.push_back(S0 + static_cast<int32_t>(sym));
      t.insert(t.end(), kTable[sym].begin(), kTable[sym].end());
    }
    src.push_back(std::move(s));
    tgt.push_back(std::move(t));
  }
  return {src, tgt};
}

CtcConfig toy_config(int64_t upsample) {
  CtcConfig c;
  c.encoder = RnnEncoderConfig{.cell = CellKind::Lstm,
                               .vocab = S0 + static_cast<int64_t>(kTable.size()),
                               .embed = 16,
                               .hidden = 32,
                               .layers = 1,
                               .bidirectional = true};
  c.tgt_vocab = S0 + 3;
  c.upsample = upsample;
  return c;
}

TEST(CtcModel, LearnsAMonotonicTransductionEndToEnd) {
  ParameterStore store;
  Rng rng(3);
  CtcModel model(toy_config(4), Scope(store, rng, "m"));
  Optimizer opt({}, store);
  Graph g;
  for (int step = 0; step < 1200; ++step) {
    auto [src, tgt] = transduction(rng, 32);
    Var loss = model.loss(g, make_batch(src, tgt, false));
    g.backward(loss);
    clip_grad_norm(store, 5.f);
    opt.step(step < 900 ? 1e-2f : 2e-3f);
    g.clear();
  }
  Rng test_rng(99);
  auto [src, tgt] = transduction(test_rng, 300);
  const auto hyps = decode_batch(model, src, {.beam = 1});
  int right = 0;
  for (size_t i = 0; i < hyps.size(); ++i) right += hyps[i].tokens == tgt[i] ? 1 : 0;
  EXPECT_GE(right / 300.0, 0.95) << right << " of 300 exactly right";
  // the prefix search finds them too, never less probable than the best path
  const auto beam = decode_batch(model, src, {.beam = 4});
  for (size_t i = 0; i < hyps.size(); ++i) EXPECT_GE(beam[i].log_prob, hyps[i].log_prob - 1e-4);
}

// The model's loss is the op's sum over the batch on its own frame logits, per target token
// (EOS counted), with each source position repeated `upsample` times.
TEST(CtcModel, LossIsTheOpOnUpsampledFrames) {
  ParameterStore store;
  Rng rng(5);
  CtcModel model(toy_config(3), Scope(store, rng, "m"));
  auto [src, tgt] = transduction(rng, 5);
  const Seq2SeqBatch b = make_batch(src, tgt, false);
  Graph g(Mode::Inference);
  std::vector<int32_t> frames(b.B);
  Var logits = model.frame_logits(g, b.src, b.S, b.src_lengths, frames);
  ASSERT_EQ(logits.dim(1), 3 * b.S);
  double want = 0;
  for (int64_t i = 0; i < b.B; ++i) {
    EXPECT_EQ(frames[i], 3 * b.src_lengths[i]);
    // row i alone: its frames are those of the batch (padding changes nothing)
    Graph one(Mode::Inference);
    std::vector<int32_t> f1(1);
    const Seq2SeqBatch bi = make_batch({src[i]}, {tgt[i]}, false);
    Var li = model.frame_logits(one, bi.src, bi.S, bi.src_lengths, f1);
    const int32_t L = static_cast<int32_t>(tgt[i].size());
    std::vector<int32_t> labels = tgt[i];
    if (labels.empty()) labels.push_back(0);
    Var nll = ctc_loss(li, f1, labels, std::vector<int32_t>{L},
                       {.blank = CtcModel::kBlank, .reduction = Reduction::Sum});
    want += nll.value().data()[0];
  }
  const double got = model.loss(g, b).value().data()[0] * static_cast<double>(b.target_tokens);
  EXPECT_NEAR(got, want, 1e-3 * std::abs(want));
}

// the whole model, and with an output layer that reads 2 positions ahead (--lookahead)
TEST(CtcModel, WholeModelGradients) {
  for (int64_t lookahead : {0, 2}) {
    ParameterStore store;
    Rng rng(8);
    CtcConfig c = toy_config(2);
    c.lookahead = lookahead;
    std::get<RnnEncoderConfig>(c.encoder).embed = 4;
    std::get<RnnEncoderConfig>(c.encoder).hidden = 3;
    CtcModel model(c, Scope(store, rng, "m"));
    auto [src, tgt] = transduction(rng, 3);
    const Seq2SeqBatch batch = make_batch(src, tgt, false);
    std::vector<Parameter*> params(store.all().begin(), store.all().end());
    testing::expect_gradients([&](Graph& g, std::vector<Var>&) { return model.loss(g, batch); }, {},
                              {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 6}, {},
                              params);
  }
}

TEST(CtcModel, ConfigRoundTripsThroughTheRegistry) {
  CtcConfig c = toy_config(2);
  c.dropout = 0.25f;
  c.lookahead = 3;
  const nlohmann::json j = to_json(Seq2SeqConfig{c});
  EXPECT_EQ(j.at("model"), "ctc");
  const CtcConfig back = CtcConfig::from_json(j);
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.upsample, 2);
  EXPECT_EQ(back.lookahead, 3);
  nlohmann::json older = j;  // written before the lookahead: none
  older.erase("lookahead");
  EXPECT_EQ(CtcConfig::from_json(older).lookahead, 0);
  ParameterStore store;
  Rng rng(1);
  auto m = make_seq2seq_model(j, Scope(store, rng, "m"));
  ASSERT_NE(m->frame_labeller(), nullptr);
  EXPECT_EQ(m->frame_labeller()->upsample(), 2);
  nlohmann::json bad = j;
  bad["upsample"] = 0;
  EXPECT_THROW(CtcConfig::from_json(bad), Error);
}

// The picture: a row per label then the blank's, each a distribution over the source units;
// forced decoding gives the exact log-probability of the target and the same rows.
TEST(CtcModel, AlignmentRowsAreDistributionsOverTheSource) {
  ParameterStore store;
  Rng rng(4);
  CtcModel model(toy_config(4), Scope(store, rng, "m"));
  auto [src, tgt] = transduction(rng, 4);
  const auto n_best = ctc_decode_n_best(model, src, {.beam = 3, .n_best = 2}, true);
  for (size_t i = 0; i < src.size(); ++i)
    for (const Hypothesis& h : n_best[i]) {
      ASSERT_EQ(h.attention.size(), h.tokens.size() + 1);
      for (const auto& row : h.attention) {
        ASSERT_EQ(row.size(), src[i].size());
        double total = 0;
        for (float v : row) total += v;
        EXPECT_NEAR(total, 1.0, 1e-4);
      }
    }
  const auto forced = force_decode(model, src, tgt, {.wanted = true});
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_EQ(forced[i].tokens, tgt[i]);
    EXPECT_TRUE(std::isfinite(forced[i].log_prob));
    EXPECT_LT(forced[i].log_prob, 0);
    EXPECT_EQ(forced[i].attention.size(), tgt[i].size() + 1);
  }
  // an unalignable target: -inf, and ctc_alignable says so
  const std::vector<int32_t> too_long(5, S0);  // 9 positions needed
  EXPECT_FALSE(ctc_alignable(4 * 2, too_long));
  const auto none = force_decode(model, {{S0, S0 + 1}}, {too_long});
  EXPECT_EQ(none[0].log_prob, -std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace heed
