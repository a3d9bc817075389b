// Test support for search and decoders: small models of each decoder style over a vocabulary of
// 15 (ids 4..14 are words), random sources, and a few steps of a model's incremental decoder fed
// fixed tokens and reordered as beam search does (row r continues row r/K*K + (r+t)%K at step t:
// rows of one source only), to compare decoders step by step.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "heed/data/vocab.h"
#include "heed/models/conv_seq2seq.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/seq2seq.h"
#include "heed/models/transformer_seq2seq.h"

namespace heed::testing {

constexpr int64_t kSmallVocab = 15;

// A model that answers as `model` does, each of its decoders handed to wrap() (tests that watch
// or change what a search sees of a decoder; Forwarding passes every call on).
class ForwardingModel : public Seq2SeqModel {
 public:
  explicit ForwardingModel(const Seq2SeqModel& model) : m_(model) {}
  int64_t tgt_vocab() const override { return m_.tgt_vocab(); }
  bool reverse_source() const override { return m_.reverse_source(); }
  int64_t max_output_len() const override { return m_.max_output_len(); }
  DecoderHeads decoder_heads() const override { return m_.decoder_heads(); }
  OnlinePolicy online_policy() const override { return m_.online_policy(); }
  bool hard_monotonic_attention() const override { return m_.hard_monotonic_attention(); }
  Var loss(Graph& g, const Seq2SeqBatch& b, float smoothing) const override {
    return m_.loss(g, b, smoothing);
  }
  std::unique_ptr<IncrementalDecoder> start_decoding(Graph& g, const Seq2SeqBatch& b,
                                                     int64_t max_len, const AttentionChoice& a,
                                                     int64_t rows_per_source) const override {
    return wrap(m_.start_decoding(g, b, max_len, a, rows_per_source));
  }

  struct Forwarding : IncrementalDecoder {
    explicit Forwarding(std::unique_ptr<IncrementalDecoder> d) : inner(std::move(d)) {}
    Step step(std::span<const int32_t> prev, Scores s) override { return inner->step(prev, s); }
    void reorder(std::span<const int32_t> from) override { inner->reorder(from); }
    bool drop_rows(std::span<const int32_t> keep) override { return inner->drop_rows(keep); }
    bool extend_source(const Seq2SeqBatch& longer, bool retake) override {
      return inner->extend_source(longer, retake);
    }
    std::unique_ptr<IncrementalDecoder> inner;
  };

 protected:
  virtual std::unique_ptr<IncrementalDecoder> wrap(std::unique_ptr<IncrementalDecoder> d) const = 0;

 private:
  const Seq2SeqModel& m_;
};

// "bahdanau", "luong" (Luong general attention over a reversed source): the two RNN decoder
// styles ("bahdanau_maxout": with the deep-output read-out of 6 maxout units); "transformer": 2+2
// layers, d 16 ("transformer_mocha": its heads monotonic; "transformer_mocha_top": in the top
// decoder layer only, the other without cross-attention; "transformer_milk": one shared policy,
// every head of both layers attending over the whole prefix up to its stop); "conv": ConvS2S,
// 2+2 layers, E 8, C 12
inline std::unique_ptr<Seq2SeqModel> small_seq2seq(const std::string& kind, ParameterStore& store,
                                                   Rng& rng) {
  if (kind.starts_with("transformer")) {
    TransformerSeq2SeqConfig c;
    c.src_vocab = c.tgt_vocab = kSmallVocab;
    c.layer = {.d_model = 16, .heads = 2, .ff = 32, .dropout = 0, .norm = NormPlacement::Pre};
    // monotonic multihead attention, MoChA heads of 2; in the top layer only, r = 2: stops near
    // p = 0.9, so that no head runs off the source (whose rows would be empty: every attention
    // row of these tests sums to 1); one shared policy, r = 1.5, every head over the prefix
    const bool top = kind == "transformer_mocha_top", milk = kind == "transformer_milk";
    if (kind != "transformer")
      c.layer.monotonic = MonotonicHeadsConfig{.chunk = milk ? 100 : 2,
                                               .bias = top    ? 2.f
                                                       : milk ? 1.5f
                                                              : 0.f,
                                               .noise = 0.f,
                                               .layers = top ? 1 : 0,
                                               .shared = milk};
    c.enc_layers = c.dec_layers = 2;
    c.max_positions = 64;
    return std::make_unique<TransformerSeq2Seq>(c, Scope(store, rng));
  }
  if (kind == "conv") {
    ConvSeq2SeqConfig c{.src_vocab = kSmallVocab,
                        .tgt_vocab = kSmallVocab,
                        .embed = 8,
                        .channels = 12,
                        .enc_layers = 2,
                        .dec_layers = 2,
                        .dropout = 0,
                        .max_positions = 64};
    return std::make_unique<ConvSeq2Seq>(c, Scope(store, rng));
  }
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.vocab = kSmallVocab, .embed = 8, .hidden = 8};
  c.tgt_vocab = kSmallVocab;
  c.tgt_embed = 8;
  c.dec_hidden = 16;
  c.attention = kind == "luong" ? AttentionKind::LuongGeneral : AttentionKind::Bahdanau;
  c.attn_dim = 8;
  c.reverse_source = kind == "luong";
  if (kind == "bahdanau_maxout") {
    c.readout = Readout::Maxout;
    c.readout_dim = 6;
  }
  return std::make_unique<RnnSeq2Seq>(c, Scope(store, rng));
}

// A small model with its own parameters and generator; tests then draw their sources from `rng`.
struct SmallSeq2Seq {
  SmallSeq2Seq(const std::string& kind, uint64_t seed)
      : rng(seed), model(small_seq2seq(kind, store, rng)) {}
  ParameterStore store;
  Rng rng;
  std::unique_ptr<Seq2SeqModel> model;
};

// n sources of 1..7 word ids
inline std::vector<std::vector<int32_t>> random_sources(Rng& rng, int n) {
  std::vector<std::vector<int32_t>> s;
  for (int i = 0; i < n; ++i) {
    std::vector<int32_t> x;
    for (int64_t k = 0, len = 1 + rng.below(7); k < len; ++k)
      x.push_back(static_cast<int32_t>(4 + rng.below(kSmallVocab - 4)));
    s.push_back(x);
  }
  return s;
}

// A batch's loss and the token-weighted mean of each pair's loss computed alone (no padding):
// equal when padding changes nothing.
inline std::pair<double, double> batch_and_pair_losses(
    const Seq2SeqModel& model, const std::vector<std::vector<int32_t>>& src,
    const std::vector<std::vector<int32_t>>& tgt) {
  Graph g(Mode::Inference);
  const double batch = model.loss(g, make_batch(src, tgt, false)).value().data()[0];
  double sum = 0;
  int64_t tokens = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    const Seq2SeqBatch one = make_batch({src[i]}, {tgt[i]}, false);
    sum += model.loss(g, one).value().data()[0] * static_cast<double>(one.target_tokens);
    tokens += one.target_tokens;
  }
  return {batch, sum / static_cast<double>(tokens)};
}

struct DecodeSteps {
  std::vector<std::vector<float>> scores;   // per step: [rows, V] log-probabilities
  std::vector<std::vector<float>> weights;  // per step: [rows, S] attention
};

// `rows` decoder rows over batch `b` started with `per_source` rows per source; reordered within
// groups of K rows.
inline DecodeSteps decode_steps(const Seq2SeqModel& model, const Seq2SeqBatch& b, int64_t rows,
                                int64_t K, int64_t per_source, int steps = 4) {
  Graph g(Mode::Inference);
  auto d = model.start_decoding(g, b, 8, {}, per_source);
  const int64_t V = model.tgt_vocab();
  std::vector<int32_t> prev(rows, Vocab::kBos), from(rows);
  DecodeSteps out;
  for (int t = 0; t < steps; ++t) {
    IncrementalDecoder::Step x = d->step(prev, Scores::LogProbs);
    out.scores.emplace_back(x.scores, x.scores + rows * V);
    out.weights.emplace_back(x.weights, x.weights + rows * b.S);
    for (int64_t r = 0; r < rows; ++r) {
      prev[r] = static_cast<int32_t>(4 + (r * 7 + t) % (V - 4));
      from[r] = static_cast<int32_t>(r / K * K + (r + t) % K);
    }
    d->reorder(from);
  }
  return out;
}

}  // namespace heed::testing
