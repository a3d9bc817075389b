// Beam search: K = 1 is greedy decoding exactly (tokens, scores, attention), for both RNN
// decoder styles and the Transformer (whose key/value caches follow the beams); a decoder
// started with K rows per source (each source encoded once) steps exactly as one started on
// every source repeated K times; two decoders of one model interleave; wider beams return
// well-formed hypotheses with attention rows over their sources; an n-best list holds n distinct
// hypotheses, best first, each scored with its forced log-probability, the 1-best first; rows
// dropped from greedy decoding leave the others stepping as their sources alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "heed/data/vocab.h"
#include "heed/decode/beam_search.h"
#include "heed/decode/forced.h"
#include "heed/decode/greedy.h"
#include "heed/decode/replace_unk.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/transformer_seq2seq.h"
#include "heed/util/error.h"
#include "support/print.h"
#include "support/seq2seq_models.h"

namespace heed {
namespace {

// "bahdanau" and "luong" (with a reversed source): the two RNN decoder styles; "transformer"
class EveryDecoder : public ::testing::TestWithParam<std::string> {};

using testing::random_sources;
using testing::SmallSeq2Seq;

// log p(tokens EOS | source) as the teacher-forced loss computes it; for hard monotonic attention,
// whose loss is the expectation over every stop and not the hard path decoding takes, as forced
// decoding computes it (one row, no reordering)
double forced_log_prob(const Seq2SeqModel& model, const std::vector<int32_t>& source,
                       const std::vector<int32_t>& tokens) {
  if (model.hard_monotonic_attention())
    return force_decode(model, {source}, {tokens}, {.wanted = false})[0].log_prob;
  Graph g(Mode::Inference);
  Var loss = model.loss(g, make_batch({source}, {tokens}, model.reverse_source()));
  return -loss.value().data()[0] * static_cast<double>(tokens.size() + 1);
}

TEST_P(EveryDecoder, BeamOfOneIsGreedy) {
  SmallSeq2Seq small(GetParam(), 21);
  const Seq2SeqModel& model = *small.model;
  auto src = random_sources(small.rng, 6);
  std::vector<std::vector<int32_t>> none(src.size());
  std::vector<int64_t> limits;  // the default --max-len-ratio 2, each sentence its own
  for (auto& s : src) limits.push_back(2 * static_cast<int64_t>(s.size()) + 10);
  auto greedy = greedy_decode(model, make_batch(src, none, model.reverse_source()), limits);
  auto beam = beam_search(model, src, {.beam = 1});
  ASSERT_EQ(beam.size(), greedy.size());
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_EQ(beam[i].tokens, greedy[i].tokens) << "sentence " << i;
    EXPECT_NEAR(beam[i].log_prob, greedy[i].log_prob, 1e-9);
    ASSERT_EQ(beam[i].attention.size(), greedy[i].attention.size());
    for (size_t t = 0; t < beam[i].attention.size(); ++t)
      EXPECT_EQ(beam[i].attention[t], greedy[i].attention[t]);
  }
}

// Greedy search asked for no scores takes each row's argmax without normalising it (the
// Transformer: Scores::Argmax, no log-sum-exp): the same tokens and attention, no scores.
TEST_P(EveryDecoder, GreedyWithoutScoresTakesTheSameTokens) {
  SmallSeq2Seq small(GetParam(), 23);
  const Seq2SeqModel& model = *small.model;
  auto src = random_sources(small.rng, 7);
  std::vector<std::vector<int32_t>> none(src.size());
  const Seq2SeqBatch b = make_batch(src, none, model.reverse_source());
  std::vector<int64_t> limits;
  for (auto& s : src) limits.push_back(2 * static_cast<int64_t>(s.size()) + 10);
  const auto scored = greedy_decode(model, b, limits);
  const auto bare = greedy_decode(model, b, limits, {}, nullptr, false);
  ASSERT_EQ(bare.size(), scored.size());
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_EQ(bare[i].tokens, scored[i].tokens) << "sentence " << i;
    EXPECT_EQ(bare[i].attention, scored[i].attention) << "sentence " << i;
    EXPECT_EQ(bare[i].log_prob, 0.0);
    EXPECT_TRUE(bare[i].token_log_probs.empty());
    EXPECT_LT(scored[i].log_prob, 0.0);
  }
}

TEST_P(EveryDecoder, RowsPerSourceDecodeAsRepeatedSources) {
  SmallSeq2Seq small(GetParam(), 23);
  const Seq2SeqModel& model = *small.model;
  auto src = random_sources(small.rng, 4);
  constexpr int64_t K = 3;
  std::vector<std::vector<int32_t>> rep;
  for (const auto& s : src)
    for (int64_t k = 0; k < K; ++k) rep.push_back(s);
  const bool rev = model.reverse_source();
  const int64_t rows = K * static_cast<int64_t>(src.size());
  const auto once = testing::decode_steps(
      model, make_batch(src, std::vector<std::vector<int32_t>>(src.size()), rev), rows, K, K);
  const auto repeated = testing::decode_steps(
      model, make_batch(rep, std::vector<std::vector<int32_t>>(rep.size()), rev), rows, K, 1);
  for (size_t t = 0; t < once.scores.size(); ++t) {
    for (size_t i = 0; i < once.scores[t].size(); ++i)
      ASSERT_NEAR(once.scores[t][i], repeated.scores[t][i], 1e-5f) << "step " << t << " " << i;
    for (size_t i = 0; i < once.weights[t].size(); ++i)
      ASSERT_NEAR(once.weights[t][i], repeated.weights[t][i], 1e-5f) << "step " << t << " " << i;
  }
}

// Two decoders of one model over different batches, stepped in turn, each step as when run
// alone: every decoder keeps its own state (the RNN's attention memory included).
TEST_P(EveryDecoder, DecodersOfOneModelInterleave) {
  SmallSeq2Seq small(GetParam(), 25);
  const Seq2SeqModel& model = *small.model;
  const bool rev = model.reverse_source();
  const auto x = random_sources(small.rng, 3), y = random_sources(small.rng, 3);
  const std::vector<std::vector<int32_t>> none(3);
  const Seq2SeqBatch bx = make_batch(x, none, rev), by = make_batch(y, none, rev);
  const auto alone_x = testing::decode_steps(model, bx, 3, 1, 1);
  const auto alone_y = testing::decode_steps(model, by, 3, 1, 1);
  Graph gx(Mode::Inference), gy(Mode::Inference);
  auto dx = model.start_decoding(gx, bx, 8, {});
  auto dy = model.start_decoding(gy, by, 8, {});
  const int64_t V = model.tgt_vocab();
  std::vector<int32_t> prev(3, Vocab::kBos);
  for (size_t t = 0; t < alone_x.scores.size(); ++t) {
    const IncrementalDecoder::Step sx = dx->step(prev, Scores::LogProbs);
    const std::vector<float> scores_x(sx.scores, sx.scores + 3 * V);
    const IncrementalDecoder::Step sy = dy->step(prev, Scores::LogProbs);
    for (int64_t i = 0; i < 3 * V; ++i) {
      ASSERT_NEAR(scores_x[i], alone_x.scores[t][i], 1e-5f) << "step " << t;
      ASSERT_NEAR(sy.scores[i], alone_y.scores[t][i], 1e-5f) << "step " << t;
    }
    for (int64_t r = 0; r < 3; ++r) prev[r] = static_cast<int32_t>(4 + (r * 7 + t) % (V - 4));
  }
}

// Each sentence stops at its own length limit, whatever is decoded beside it: a short source
// decoded beside a long one, greedy or with a beam, gives what it gives alone (the longest source
// of a batch once set every sentence's limit, so a sentence that never ends came out longer in a
// batch, and a server's answer depended on the requests batched with it).
TEST_P(EveryDecoder, EachSentenceHasItsOwnLengthLimit) {
  SmallSeq2Seq small(GetParam(), 27);
  const Seq2SeqModel& model = *small.model;
  const auto shorts = random_sources(small.rng, 6);  // 1..7 ids
  std::vector<int32_t> long_source;                  // 20 ids
  for (int32_t k = 0; k < 20; ++k)
    long_source.push_back(static_cast<int32_t>(4 + k % (testing::kSmallVocab - 4)));
  BeamOptions o{.max_len_ratio = 1.0};
  int cut = 0;  // outputs that reached their limit: the case under test
  for (int beam : {1, 3}) {
    o.beam = beam;
    for (const auto& s : shorts) {
      const auto limit = static_cast<size_t>(output_limit(o, static_cast<int64_t>(s.size())));
      const auto alone = decode_batch(model, {s}, o);
      const auto beside = decode_batch(model, {s, long_source}, o);
      EXPECT_LE(beside[0].tokens.size(), limit) << "beam " << beam;
      EXPECT_EQ(beside[0].tokens, alone[0].tokens) << "beam " << beam;
      cut += alone[0].tokens.size() == limit ? 1 : 0;
    }
  }
  EXPECT_GT(cut, 0) << "no output reached its limit: the test checks nothing";
}

// A step asked for no scores (online decoding's replay) advances the decoder's state exactly as
// a scored step: the steps after it score as in a decoder scored all along.
TEST_P(EveryDecoder, StepWithoutScoresAdvancesTheStateAlone) {
  SmallSeq2Seq small(GetParam(), 29);
  const Seq2SeqModel& model = *small.model;
  const auto src = random_sources(small.rng, 3);
  const Seq2SeqBatch b = make_batch(src, std::vector<std::vector<int32_t>>(3), false);
  Graph g1(Mode::Inference), g2(Mode::Inference);
  auto scored = model.start_decoding(g1, b, 8, {});
  auto replayed = model.start_decoding(g2, b, 8, {});
  const int64_t V = model.tgt_vocab();
  std::vector<int32_t> prev(3, Vocab::kBos);
  for (int64_t t = 0; t < 6; ++t) {
    const IncrementalDecoder::Step a = scored->step(prev, Scores::LogProbs);
    const bool replay = t < 3;  // the first three steps unscored
    const IncrementalDecoder::Step r =
        replayed->step(prev, replay ? Scores::None : Scores::LogProbs);
    if (replay) {
      EXPECT_EQ(r.scores, nullptr);
    } else {
      for (int64_t i = 0; i < 3 * V; ++i)
        ASSERT_NEAR(r.scores[i], a.scores[i], 1e-5f) << "step " << t;
    }
    for (int64_t k = 0; k < 3; ++k) prev[k] = static_cast<int32_t>(4 + (k * 5 + t) % (V - 4));
  }
}

TEST_P(EveryDecoder, WideBeamsGiveWellFormedHypotheses) {
  SmallSeq2Seq small(GetParam(), 22);
  const Seq2SeqModel& model = *small.model;
  auto src = random_sources(small.rng, 4);
  for (int k : {2, 5}) {
    auto hyps = beam_search(model, src, {.beam = k, .length_penalty = 0.6});
    for (size_t i = 0; i < src.size(); ++i) {
      const size_t max_len = 2 * src[i].size() + 10;  // the default --max-len-ratio 2
      // one row per output token and one for EOS; a hypothesis cut at the length limit
      // has no EOS row
      const size_t n = hyps[i].tokens.size();
      EXPECT_TRUE(hyps[i].attention.size() == n + 1 ||
                  (hyps[i].attention.size() == n && n == max_len))
          << "beam " << k << ": " << hyps[i].attention.size() << " rows for " << n << " tokens";
      for (const auto& row : hyps[i].attention) {
        EXPECT_EQ(row.size(), src[i].size());
        double sum = 0;
        for (float a : row) sum += a;
        EXPECT_NEAR(sum, 1.0, 1e-4);
      }
      for (int32_t tok : hyps[i].tokens) EXPECT_GT(tok, Vocab::kEos);  // no EOS, PAD or BOS
      EXPECT_LE(hyps[i].log_prob, 0.0);
    }
  }
}

TEST_P(EveryDecoder, WiderBeamsFindMoreProbableOutputs) {
  // (transformer_milk drawn from seed 23 is a model whose greedy outputs are already the most
  // probable on all 30 sources: beam 5 finds the same to the last digit; from seeds 30-34, 22-27
  // of the 30 are bettered)
  SmallSeq2Seq small(GetParam(), GetParam() == "transformer_milk" ? 30 : 23);
  const Seq2SeqModel& model = *small.model;
  auto src = random_sources(small.rng, 30);
  auto one = beam_search(model, src, {.beam = 1, .length_penalty = 0});
  auto five = beam_search(model, src, {.beam = 5, .length_penalty = 0});
  double sum1 = 0, sum5 = 0;
  int better = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    sum1 += one[i].log_prob;
    sum5 += five[i].log_prob;
    better += five[i].log_prob > one[i].log_prob + 1e-6;
  }
  EXPECT_GT(sum5, sum1);  // by raw log-probability, the wider search wins overall
  EXPECT_GT(better, 0);
}

// Each beam hypothesis' score is the model's log-probability of its tokens, as the teacher-
// forced loss computes it: the decoder state (RNN state, Transformer key/value caches) followed
// the right parent at every reordering.
TEST_P(EveryDecoder, BeamScoresEqualTheForcedLogProbability) {
  SmallSeq2Seq small(GetParam(), 24);
  const Seq2SeqModel& model = *small.model;
  auto src = random_sources(small.rng, 12);
  auto hyps = beam_search(model, src, {.beam = 4, .length_penalty = 0.6});
  int checked = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    if (hyps[i].attention.size() != hyps[i].tokens.size() + 1) continue;  // cut, no EOS
    const double forced = forced_log_prob(model, src[i], hyps[i].tokens);
    EXPECT_NEAR(hyps[i].log_prob, forced, 1e-4 * (1 + std::abs(forced))) << "sentence " << i;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// The n best: n distinct outputs per sentence, ranked by normalised score, the first being
// beam_search's output, each scored with the model's log-probability of its tokens.
TEST_P(EveryDecoder, NBestListsAreDistinctRankedAndScored) {
  SmallSeq2Seq small(GetParam(), 25);
  const Seq2SeqModel& model = *small.model;
  auto src = random_sources(small.rng, 8);
  const BeamOptions o{.beam = 4, .length_penalty = 0.6, .n_best = 3};
  auto lists = beam_search_n_best(model, src, o);
  auto best = beam_search(model, src, o);
  ASSERT_EQ(lists.size(), src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    const auto& l = lists[i];
    ASSERT_EQ(l.size(), 3U) << "sentence " << i;
    EXPECT_EQ(l[0].tokens, best[i].tokens);
    EXPECT_EQ(l[0].log_prob, best[i].log_prob);
    for (size_t k = 0; k < l.size(); ++k) {
      if (k > 0) {
        EXPECT_GE(normalised_score(l[k - 1], 0.6), normalised_score(l[k], 0.6));
      }
      for (size_t j = 0; j < k; ++j) EXPECT_NE(l[j].tokens, l[k].tokens);
      if (l[k].attention.size() != l[k].tokens.size() + 1) continue;  // cut, no EOS
      const double forced = forced_log_prob(model, src[i], l[k].tokens);
      EXPECT_NEAR(l[k].log_prob, forced, 1e-4 * (1 + std::abs(forced))) << i << " #" << k;
    }
  }
  // greedy has one output; asking for more is an error, as is more than the beam
  EXPECT_EQ(decode_n_best(model, src, {.beam = 1})[0].size(), 1U);
  EXPECT_THROW(decode_n_best(model, src, {.beam = 1, .n_best = 2}), Error);
  EXPECT_THROW(beam_search_n_best(model, src, {.beam = 2, .n_best = 3}), Error);
}

// Greedy search drops the rows of finished sentences (IncrementalDecoder::drop_rows): the rows
// kept step on exactly as in a decoder started on their sources alone and fed the same outputs
// (scores and attention), over two drops. False: the decoder keeps every row.
bool expect_dropped_rows_step_on_alone(const Seq2SeqModel& model, Rng& rng) {
  const bool rev = model.reverse_source();
  const auto src = random_sources(rng, 6);
  const std::vector<int32_t> first = {1, 3, 4, 5}, then = {0, 2, 3};  // rows, after each drop
  const std::vector<int32_t> keep = {1, 4, 5};  // the sentences left after both
  std::vector<std::vector<int32_t>> kept_src;
  for (int32_t r : keep) kept_src.push_back(src[r]);
  Graph g(Mode::Inference), h(Mode::Inference);
  const Seq2SeqBatch b_all = make_batch(src, std::vector<std::vector<int32_t>>(src.size()), rev);
  const Seq2SeqBatch b_few =
      make_batch(kept_src, std::vector<std::vector<int32_t>>(keep.size()), rev);
  auto all = model.start_decoding(g, b_all, 8, {.wanted = true});
  auto few = model.start_decoding(h, b_few, 8, {.wanted = true});
  const int64_t V = model.tgt_vocab();
  auto output = [&](int32_t sentence, int t) {  // what sentence `sentence` wrote at step t
    return static_cast<int32_t>(4 + (sentence * 7 + t) % (V - 4));
  };
  std::vector<int32_t> sentence = {0, 1, 2, 3, 4, 5}, prev_all(6, Vocab::kBos),
                       prev_few(3, Vocab::kBos);
  auto drop = [&](const std::vector<int32_t>& rows) {
    if (!all->drop_rows(rows)) return false;
    std::vector<int32_t> s, p;
    for (int32_t r : rows) {
      s.push_back(sentence[r]);
      p.push_back(prev_all[r]);
    }
    sentence = s;
    prev_all = p;
    return true;
  };
  for (int t = 0; t < 5; ++t) {
    if (t == 2 && !drop(first)) return false;  // sentences 0 and 2 have ended
    if (t == 3) {
      EXPECT_TRUE(drop(then));  // and sentence 3
    }
    const IncrementalDecoder::Step a = all->step(prev_all, Scores::LogProbs);
    const std::vector<float> scores_all(a.scores, a.scores + sentence.size() * V);
    std::vector<float> weights_all;  // [rows, S of all]
    if (a.weights != nullptr)
      weights_all.assign(a.weights, a.weights + sentence.size() * static_cast<size_t>(b_all.S));
    const IncrementalDecoder::Step f = few->step(prev_few, Scores::LogProbs);
    EXPECT_EQ(a.weights == nullptr, f.weights == nullptr);
    for (size_t k = 0; k < keep.size(); ++k) {
      const auto row = static_cast<size_t>(std::find(sentence.begin(), sentence.end(), keep[k]) -
                                           sentence.begin());
      for (int64_t v = 0; v < V; ++v)
        EXPECT_NEAR(scores_all[row * V + v], f.scores[k * V + v], 1e-5f)
            << "step " << t << ", sentence " << keep[k] << ", token " << v;
      if (weights_all.empty() || f.weights == nullptr) continue;
      for (size_t j = 0; j < src[keep[k]].size(); ++j)
        EXPECT_NEAR(weights_all[row * b_all.S + j], f.weights[k * b_few.S + j], 1e-6f)
            << "step " << t << ", sentence " << keep[k] << ", position " << j;
    }
    for (size_t r = 0; r < sentence.size(); ++r) prev_all[r] = output(sentence[r], t);
    for (size_t k = 0; k < keep.size(); ++k) prev_few[k] = output(keep[k], t);
  }
  return true;
}

TEST_P(EveryDecoder, DroppedRowsStepOnAsTheirSourcesAlone) {
  SmallSeq2Seq small(GetParam(), 27);
  if (!expect_dropped_rows_step_on_alone(*small.model, small.rng))
    GTEST_SKIP() << "this decoder keeps every row";
}

// The RNN decoder drops rows with every attention mechanism: each keeps its own per-row state
// (the memory's projections, Luong-dot's the memory itself, MoChA's chunk keys, the last
// alignment, exact hard attention's W_c h_j) and an LSTM decoder its cell.
TEST(RnnDecoder, DropsRowsWithEveryAttention) {
  for (AttentionKind kind : {AttentionKind::None, AttentionKind::Bahdanau, AttentionKind::LuongDot,
                             AttentionKind::LuongGeneral, AttentionKind::LuongConcat,
                             AttentionKind::LocalM, AttentionKind::LocalP, AttentionKind::Monotonic,
                             AttentionKind::Mocha, AttentionKind::Hard}) {
    for (HardTraining training : {HardTraining::Exact, HardTraining::Reinforce}) {
      if (kind != AttentionKind::Hard && training != HardTraining::Exact) continue;
      SCOPED_TRACE(attention_name(kind) + (kind == AttentionKind::Hard
                                               ? std::string(" ") + name_of(training)
                                               : std::string()));
      RnnSeq2SeqConfig c;
      c.encoder = RnnEncoderConfig{.vocab = testing::kSmallVocab, .embed = 8, .hidden = 8};
      c.tgt_vocab = testing::kSmallVocab;
      c.tgt_embed = 8;
      c.dec_hidden = 16;
      c.dec_cell = CellKind::Lstm;
      c.attention = kind;
      c.attn_dim = 8;
      c.local.window = 2;
      c.monotonic_attention.chunk = 2;
      c.monotonic_attention.bias = 0.f;  // stops that move on, and some that run off the end
      c.hard.training = training;
      ParameterStore store;
      Rng rng(31);
      const RnnSeq2Seq model(c, Scope(store, rng));
      EXPECT_TRUE(expect_dropped_rows_step_on_alone(model, rng));
    }
  }
}

// Beam search over a batch finds what it finds for each sentence alone: the sentences whose K
// hypotheses have ended leave the batch (their rows dropped) without disturbing the others.
TEST_P(EveryDecoder, ABatchSearchesAsEachSentenceAlone) {
  SmallSeq2Seq small(GetParam(), 29);
  const Seq2SeqModel& model = *small.model;
  // EOS made likelier by the output layer's bias, so that sentences end at different steps (the
  // small RNNs do by themselves; with the boost, each ends at once)
  const float boost = GetParam() == "transformer_mocha_top"   ? 2.5f  // (1.5 ends none early)
                      : GetParam().starts_with("transformer") ? 1.5f
                                                              : 0.f;
  for (Parameter* p : small.store.all())
    if (p->name.ends_with("out/b") && p->value.numel() == model.tgt_vocab())
      p->value.data()[Vocab::kEos] += boost;
  const auto src = random_sources(small.rng, 6);
  const BeamOptions o{.beam = 3, .max_length = 8, .n_best = 3};  // the same limit alone
  const auto together = beam_search_n_best(model, src, o);
  std::vector<size_t> ends;  // the step each sentence's search ended at: its last hypothesis's
  for (size_t i = 0; i < src.size(); ++i) {
    const auto alone = beam_search_n_best(model, {src[i]}, o)[0];
    ASSERT_EQ(together[i].size(), alone.size()) << "sentence " << i;
    size_t end = 0;
    for (size_t h = 0; h < alone.size(); ++h) {
      EXPECT_EQ(together[i][h].tokens, alone[h].tokens) << "sentence " << i << ", " << h;
      EXPECT_NEAR(together[i][h].log_prob, alone[h].log_prob, 1e-4);
      end = std::max(end, alone[h].token_log_probs.size());
    }
    if (std::find(ends.begin(), ends.end(), end) == ends.end()) ends.push_back(end);
  }
  const size_t lengths = ends.size();
  if (GetParam() != "conv") {  // the decoders that drop rows: some were dropped
    EXPECT_GE(lengths, 2U) << "every sentence ended at the same step: no row was dropped";
  }
}

// The same model, its decoders scored as log-probabilities only (as an ensemble's are): beam
// search then reads log-softmax rows the decoder wrote, instead of the logits it normalises
// where it reads them (kernels::log_sum_exp).
class LogProbsOnly final : public testing::ForwardingModel {
 public:
  using ForwardingModel::ForwardingModel;

 private:
  struct Decoder final : Forwarding {
    using Forwarding::Forwarding;
    Step step(std::span<const int32_t> prev, Scores scores) override {
      EXPECT_NE(scores, Scores::LogitsOnly) << "logits asked of a decoder that has none";
      return inner->step(prev, scores);
    }
  };
  std::unique_ptr<IncrementalDecoder> wrap(std::unique_ptr<IncrementalDecoder> d) const override {
    return std::make_unique<Decoder>(std::move(d));
  }
};

// Beam search over the logits, each row normalised where it is read, finds what it finds over
// the written log-probabilities: the same hypotheses, scores and token log-probabilities.
TEST_P(EveryDecoder, NormalisedLogitsSearchAsLogProbabilities) {
  SmallSeq2Seq small(GetParam(), 31);
  const Seq2SeqModel& model = *small.model;
  {
    Graph g(Mode::Inference);
    const auto src = random_sources(small.rng, 1);
    const Seq2SeqBatch b = make_batch(src, {{}}, model.reverse_source());
    EXPECT_TRUE(model.start_decoding(g, b, 4, {.wanted = false})->log_probs_are_log_softmax());
  }
  const auto src = random_sources(small.rng, 5);
  const BeamOptions o{.beam = 4, .n_best = 4};
  const auto logits = beam_search_n_best(model, src, o);
  const auto log_probs = beam_search_n_best(LogProbsOnly(model), src, o);
  ASSERT_EQ(logits.size(), log_probs.size());
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_EQ(logits[i].size(), log_probs[i].size()) << "sentence " << i;
    for (size_t h = 0; h < logits[i].size(); ++h) {
      EXPECT_EQ(logits[i][h].tokens, log_probs[i][h].tokens) << "sentence " << i << ", " << h;
      EXPECT_NEAR(logits[i][h].log_prob, log_probs[i][h].log_prob, 1e-6);
      ASSERT_EQ(logits[i][h].token_log_probs.size(), log_probs[i][h].token_log_probs.size());
      for (size_t t = 0; t < logits[i][h].token_log_probs.size(); ++t)
        EXPECT_NEAR(logits[i][h].token_log_probs[t], log_probs[i][h].token_log_probs[t], 1e-6);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EveryDecoder,
                         ::testing::Values("bahdanau", "bahdanau_maxout", "luong", "transformer",
                                           "transformer_mocha", "transformer_mocha_top",
                                           "transformer_milk", "conv"),
                         [](const auto& info) { return info.param; });

// A model whose next-token distribution is a table over the prefix decoded so far, for the
// search's own rules. Tokens: A = 4, B = 5, C = 6, D = 7 (EOS = 2); a prefix the table does not
// list ends at once (EOS 0.97).
class ScriptedModel : public Seq2SeqModel {
 public:
  static constexpr int32_t A = 4, B = 5, C = 6, D = 7, V = 8;
  using Table = std::map<std::vector<int32_t>, std::map<int32_t, double>>;
  explicit ScriptedModel(Table t) : table_(std::move(t)) {}
  int64_t tgt_vocab() const override { return V; }
  Var loss(Graph& g, const Seq2SeqBatch&, float) const override {
    return g.constant(g.zeros(Shape{1}));
  }
  std::unique_ptr<IncrementalDecoder> start_decoding(Graph&, const Seq2SeqBatch& batch, int64_t,
                                                     const AttentionChoice&,
                                                     int64_t rows) const override {
    return std::make_unique<Decoder>(table_, batch.B * rows);
  }

 private:
  class Decoder : public IncrementalDecoder {
   public:
    Decoder(const Table& t, int64_t rows) : table_(t), prefix_(rows), scores_(rows * V) {}
    Step step(std::span<const int32_t> prev, Scores) override {
      for (size_t r = 0; r < prefix_.size(); ++r) {
        if (prev[r] != Vocab::kBos) prefix_[r].push_back(prev[r]);
        auto it = table_.find(prefix_[r]);
        const std::map<int32_t, double> end = {{Vocab::kEos, 0.97}};
        const std::map<int32_t, double>& p = it == table_.end() ? end : it->second;
        double rest = 1;
        for (const auto& [token, q] : p) rest -= q;
        for (int32_t v = 0; v < V; ++v) {  // what the table leaves, spread over the others
          auto q = p.find(v);
          const double pv = q != p.end() ? q->second : rest / static_cast<double>(V - p.size());
          scores_[r * V + v] = static_cast<float>(std::log(pv));
        }
      }
      return {.scores = scores_.data()};
    }
    void reorder(std::span<const int32_t> from) override {
      std::vector<std::vector<int32_t>> next(prefix_.size());
      for (size_t r = 0; r < next.size(); ++r) next[r] = prefix_[from[r]];
      prefix_ = std::move(next);
    }

   private:
    const Table& table_;
    std::vector<std::vector<int32_t>> prefix_;
    std::vector<float> scores_;
  };
  Table table_;
};

// The finished-hypothesis rule of CTranslate2, Marian and fairseq: an end of sentence is kept only
// when it is among the step's K best candidates. Beam 2; step 1's candidates, best first: A C
// (0.30), A EOS (0.27), B EOS (0.20), B D (0.16). A EOS is within the best two and finishes;
// B EOS is third and is not kept (filing it too would give the sentence its 2 finished
// hypotheses and end it with "A", 0.27); A C goes on, to A C EOS (0.297), the best output.
TEST(BeamSearch, KeepsOnlyTheEndsOfSentenceAmongTheStepsBestK) {
  using M = ScriptedModel;
  const ScriptedModel model({{{}, {{M::A, 0.6}, {M::B, 0.4 - 1e-6}}},
                             {{M::A}, {{M::C, 0.5}, {Vocab::kEos, 0.45}}},
                             {{M::B}, {{Vocab::kEos, 0.5}, {M::D, 0.4}}},
                             {{M::A, M::C}, {{Vocab::kEos, 0.99}}},
                             {{M::B, M::D}, {{Vocab::kEos, 0.99}}}});
  BeamOptions o;
  o.beam = 2;
  o.n_best = 2;
  o.length_penalty = 0;
  const auto n_best = beam_search_n_best(model, {{4, 5, 6}}, o, {.wanted = false});
  ASSERT_EQ(n_best.size(), 1u);
  ASSERT_EQ(n_best[0].size(), 2u);
  EXPECT_EQ(n_best[0][0].tokens, (std::vector<int32_t>{M::A, M::C}));
  EXPECT_NEAR(n_best[0][0].log_prob, std::log(0.6 * 0.5 * 0.99), 1e-5);
  EXPECT_EQ(n_best[0][1].tokens, (std::vector<int32_t>{M::A}));
  EXPECT_NEAR(n_best[0][1].log_prob, std::log(0.6 * 0.45), 1e-5);
}

TEST(ReplaceUnk, EachUnknownBecomesTheMostAttendedSourceWord) {
  Vocab v = Vocab::build({{"ein", "mann", "mit"}}, {});
  std::vector<int32_t> out = {v.id("ein"), Vocab::kUnk, v.id("mit"), Vocab::kUnk};
  std::vector<std::string> src = {"a", "man", "with", "zorro"};
  std::vector<std::vector<float>> att = {
      {0.9f, 0.1f, 0, 0}, {0.1f, 0.8f, 0.1f, 0}, {0, 0, 1, 0}, {0, 0.2f, 0, 0.8f}, {0, 0, 0, 1}};
  EXPECT_EQ(replace_unknowns(out, att, src, v),
            (std::vector<std::string>{"ein", "man", "mit", "zorro"}));
  // an empty source line (decoded from one <unk>) leaves the <unk>
  EXPECT_EQ(replace_unknowns(std::vector<int32_t>{Vocab::kUnk}, {{1.f}}, {}, v),
            (std::vector<std::string>{"<unk>"}));
  EXPECT_THROW(replace_unknowns(out, {}, src, v), Error);
}

}  // namespace
}  // namespace heed
