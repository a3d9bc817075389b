// The convolutional encoder-decoder (see the header).
// Leaves out: beam search (decode/) and the trainer (train/).
#include "heed/models/conv_seq2seq.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/models/model_options.h"
#include "heed/nn/sequence_encoder.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {
namespace {

const float kScale = std::sqrt(0.5f);  // s: the variance of a sum of two terms kept

}  // namespace

GatedConvConfig ConvSeq2SeqConfig::stack(int64_t layers, bool causal) const {
  return {.channels = channels,
          .kernel = kernel,
          .dilations = std::vector<int64_t>(static_cast<size_t>(layers), 1),
          .causal = causal,
          .projection = false,
          .weight_norm = weight_norm,
          .residual_scale = kScale,
          .dropout = dropout,
          .gate = kernels::Gate::Glu};
}

nlohmann::json ConvSeq2SeqConfig::to_json() const {
  return {{"model", kFamily},
          {"src_vocab", src_vocab},
          {"tgt_vocab", tgt_vocab},
          {"embed", embed},
          {"channels", channels},
          {"kernel", kernel},
          {"enc_layers", enc_layers},
          {"dec_layers", dec_layers},
          {"dropout", json_number(dropout)},
          {"weight_norm", weight_norm},
          {"max_positions", max_positions}};
}

// ConvS2S's sizes (E 256, C 512, 10+10 layers, dropout 0.25) unless given.
ConvSeq2SeqConfig ConvSeq2SeqConfig::configure(const ModelOptions& o) {
  refuse_wait_k(o, "a conv model has no wait-k");
  refuse_syntactic_attention(o, kFamily);
  refuse_ctc_options(o, kFamily);
  ConvSeq2SeqConfig c;
  c.embed = o.embed.value_or(c.embed);
  c.channels = o.conv_channels.value_or(c.channels);
  c.kernel = o.conv_kernel;
  c.weight_norm = o.conv_weight_norm;
  c.enc_layers = c.dec_layers = o.layers.value_or(c.enc_layers);
  c.dec_layers = o.dec_layers.value_or(c.dec_layers);
  c.dropout = o.dropout.value_or(c.dropout);
  c.max_positions = o.max_positions.value_or(c.max_positions);
  check_monotonic_options(o, false, false);
  return c;
}

ConvSeq2SeqConfig ConvSeq2SeqConfig::from_json(const nlohmann::json& j) {
  ConvSeq2SeqConfig c;
  try {
    c.src_vocab = j.at("src_vocab").get<int64_t>();
    c.tgt_vocab = j.at("tgt_vocab").get<int64_t>();
    c.embed = j.at("embed").get<int64_t>();
    c.channels = j.at("channels").get<int64_t>();
    c.kernel = j.at("kernel").get<int64_t>();
    c.enc_layers = j.at("enc_layers").get<int64_t>();
    c.dec_layers = j.at("dec_layers").get<int64_t>();
    c.dropout = j.at("dropout").get<float>();
    c.weight_norm = j.at("weight_norm").get<bool>();
    c.max_positions = j.at("max_positions").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed conv model config (", e.what(), ")");
  }
  return c;
}

std::string ConvSeq2SeqConfig::describe() const {
  return "conv " + std::to_string(enc_layers) + "+" + std::to_string(dec_layers) + " layers, E " +
         std::to_string(embed) + ", C " + std::to_string(channels) + ", k " +
         std::to_string(kernel) + ", receptive field " +
         std::to_string(stack(enc_layers, false).receptive_field()) + " (encoder), " +
         std::to_string(stack(dec_layers, true).receptive_field()) + " (decoder)" +
         (weight_norm ? ", weight norm" : "");
}

void ConvSeq2SeqConfig::set_vocabularies(int64_t src, int64_t tgt) {
  src_vocab = src;
  tgt_vocab = tgt;
}

ConvSeq2Seq::ConvSeq2Seq(const ConvSeq2SeqConfig& c, const Scope& scope) : c_(c) {
  check(c.src_vocab > 0 && c.tgt_vocab > 0, "conv: empty vocabulary");
  check(c.kernel % 2 == 1, "conv: the encoder's centred convolutions need an odd kernel, got ",
        c.kernel);
  check(c.enc_layers >= 1 && c.dec_layers >= 1, "conv: ", c.enc_layers, "+", c.dec_layers,
        " layers");
  const int64_t E = c.embed, C = c.channels;
  const Init emb = Init::normal(0.1f);
  src_embed_ = &scope.param("src_embed", {c.src_vocab, E}, emb, /*row_sparse=*/true);
  src_pos_ = &scope.param("src_positions", {c.max_positions, E}, emb, /*row_sparse=*/true);
  tgt_embed_ = &scope.param("tgt_embed", {c.tgt_vocab, E}, emb, /*row_sparse=*/true);
  tgt_pos_ = &scope.param("tgt_positions", {c.max_positions, E}, emb, /*row_sparse=*/true);
  const Scope enc = scope / "encoder", dec = scope / "decoder";
  enc_in_W_ = &enc.param("in/W", {C, E}, Init::glorot_uniform());
  enc_in_b_ = &enc.param("in/b", {C}, Init::zeros());
  encoder_.emplace(c.stack(c.enc_layers, false), enc);
  enc_out_W_ = &enc.param("out/W", {E, C}, Init::glorot_uniform());
  enc_out_b_ = &enc.param("out/b", {E}, Init::zeros());
  dec_in_W_ = &dec.param("in/W", {C, E}, Init::glorot_uniform());
  dec_in_b_ = &dec.param("in/b", {C}, Init::zeros());
  decoder_.emplace(c.stack(c.dec_layers, true), dec);
  for (int64_t l = 0; l < c.dec_layers; ++l) {
    const Scope a = dec / ("layer_" + std::to_string(l)) / "attention";
    att_d_W_.push_back(&a.param("d/W", {E, C}, Init::glorot_uniform()));
    att_d_b_.push_back(&a.param("d/b", {E}, Init::zeros()));
    att_c_W_.push_back(&a.param("c/W", {C, E}, Init::glorot_uniform()));
    att_c_b_.push_back(&a.param("c/b", {C}, Init::zeros()));
  }
  dec_out_W_ = &dec.param("out/W", {E, C}, Init::glorot_uniform());
  dec_out_b_ = &dec.param("out/b", {E}, Init::zeros());
  out_W_ = &scope.param("out/W", {c.tgt_vocab, E}, Init::glorot_uniform());
  out_b_ = &scope.param("out/b", {c.tgt_vocab}, Init::zeros());
}

Var ConvSeq2Seq::embed(Graph& g, Parameter& table, Parameter& positions,
                       std::span<const int32_t> ids, std::span<const int32_t> where,
                       const Shape& shape) const {
  // w_t + p_t  [..., E]
  return embedding(g.param(table), ids, shape) + embedding(g.param(positions), where, shape);
}

ConvSeq2Seq::Memory ConvSeq2Seq::encode(Graph& g, std::span<const int32_t> src, int64_t S,
                                        std::span<const int32_t> lengths,
                                        int64_t rows_per_source) const {
  const auto B = static_cast<int64_t>(lengths.size());
  check(S <= c_.max_positions, "conv: a source of ", S, " tokens is longer than the model's ",
        c_.max_positions, " positions");
  // e_j = w_j + p_j  [B, S, E]
  Var e = embed(g, *src_embed_, *src_pos_, batch_major(g, src, B, S), position_ids(g, B, S),
                Shape{B, S});
  e = dropout(e, c_.dropout);
  // h = W_in e; per layer h <- s (h + GLU(conv(h)))  [B, S, C]
  Var h = encoder_->forward(g, linear(e, g.param(*enc_in_W_), g.param(*enc_in_b_)), lengths);
  // z_j = W_out h_j  [B, S, E]
  Var z = linear(h, g.param(*enc_out_W_), g.param(*enc_out_b_));
  Tensor scale = g.alloc({B, 1, 1});  // sqrt(m) per row
  for (int64_t b = 0; b < B; ++b) scale.data()[b] = std::sqrt(static_cast<float>(lengths[b]));
  const int64_t k = rows_per_source;
  Var kv = concat({z, z + e}, 2);  // [z_j ; z_j + e_j]  [B, S, 2E]
  Var sc = g.constant(scale);
  if (k > 1) {
    z = repeat_rows(z, k);
    kv = repeat_rows(kv, k);
    sc = repeat_rows(sc, k);
  }
  return {.keys = z, .keys_values = kv, .scale = sc, .lengths = repeat_rows(g, lengths, k)};
}

Var ConvSeq2Seq::attend(Graph& g, int64_t l, Var z, Var target, const Memory& m,
                        Tensor* weights) const {
  const auto i = static_cast<size_t>(l);
  // d_i = s (W_d z_i + b_d + g_i)  [B, T, E]
  Var d = (linear(z, g.param(*att_d_W_[i]), g.param(*att_d_b_[i])) + target) * kScale;
  // c_i = sqrt(m) sum_j softmax_j(d_i . z_j) (z_j + e_j)  [B, T, E]
  const SdpaOptions o{.heads = 1, .key_lengths = m.lengths, .scale = 1.f};
  Var c = cross_attention(d, m.keys_values, o) * m.scale;
  if (weights) *weights = attention_weights(d, m.keys, o);  // [B, 1, T, S]
  // s (z_i + W_c c_i + b_c)  [B, T, C]
  return (z + linear(c, g.param(*att_c_W_[i]), g.param(*att_c_b_[i]))) * kScale;
}

Var ConvSeq2Seq::output(Graph& g, Var h) const {
  // W_o dropout(W'_out h) + b_o
  Var x = dropout(linear(h, g.param(*dec_out_W_), g.param(*dec_out_b_)), c_.dropout);
  return linear(x, g.param(*out_W_), g.param(*out_b_));
}

Var ConvSeq2Seq::decode(Graph& g, std::span<const int32_t> tgt_in, int64_t T,
                        std::span<const int32_t> tgt_lengths, const Memory& m) const {
  const auto B = static_cast<int64_t>(tgt_lengths.size());
  check(T <= c_.max_positions, "conv: a target of ", T, " tokens is longer than the model's ",
        c_.max_positions, " positions");
  // g_i = w'_i + p'_i  [B, T, E]
  Var target = dropout(embed(g, *tgt_embed_, *tgt_pos_, batch_major(g, tgt_in, B, T),
                             position_ids(g, B, T), Shape{B, T}),
                       c_.dropout);
  Var h = linear(target, g.param(*dec_in_W_), g.param(*dec_in_b_));  // [B, T, C]
  for (int64_t l = 0; l < c_.dec_layers; ++l) {
    Var z = decoder_->layer_gate(g, l, h, tgt_lengths);  // GLU(causal_conv(h))  [B, T, C]
    h = decoder_->residual(h, attend(g, l, z, target, m));
  }
  return output(g, h);  // [B, T, V]
}

Var ConvSeq2Seq::loss(Graph& g, const Seq2SeqBatch& b, float label_smoothing) const {
  check(b.wait_k == 0, "conv: a batch at wait-", b.wait_k, " (this model has no wait-k)");
  const Memory m = encode(g, b.src, b.S, b.src_lengths);
  const std::vector<int32_t> tgt_len = target_lengths(b);
  Var logits = decode(g, b.tgt_in, b.T, tgt_len, m);  // [B, T, V]
  return cross_entropy(logits, batch_major(g, b.tgt_out, b.B, b.T),
                       {.ignore_index = Vocab::kPad, .label_smoothing = label_smoothing});
}

ConvSeq2Seq::DecoderState ConvSeq2Seq::start(Graph& g, std::span<const int32_t> src, int64_t S,
                                             std::span<const int32_t> lengths,
                                             int64_t rows_per_source) const {
  const auto B = static_cast<int64_t>(lengths.size()) * rows_per_source;
  return {.memory = encode(g, src, S, lengths, rows_per_source),
          .queues = decoder_->start(B),
          .h = std::vector<float>(static_cast<size_t>(B * c_.channels))};
}

ConvSeq2Seq::Step ConvSeq2Seq::step(Graph& g, std::span<const int32_t> prev, DecoderState& st,
                                    Scores scores, int attention_layer) const {
  const auto B = static_cast<int64_t>(prev.size());
  const int64_t C = c_.channels, t = st.queues.t;
  check(t < c_.max_positions, "conv: decoding past the model's ", c_.max_positions, " positions");
  int32_t* pos = g.arena().array<int32_t>(static_cast<size_t>(B));
  std::fill(pos, pos + B, static_cast<int32_t>(t));
  // g_t = w'_{y_{t-1}} + p'_t  [B, 1, E]
  Var target = embed(g, *tgt_embed_, *tgt_pos_, prev, {pos, static_cast<size_t>(B)}, Shape{B, 1});
  Var h = linear(target, g.param(*dec_in_W_), g.param(*dec_in_b_));  // [B, 1, C]
  std::copy_n(h.value().data(), B * C, st.h.data());
  Step out;
  for (int64_t l = 0; l < c_.dec_layers; ++l) {
    // z = GLU(causal_conv(h)) from the layer's queue  [B, 1, C]
    Tensor z = g.alloc({B, 1, C});
    std::copy_n(decoder_->layer_gate_step(st.queues, l, st.h.data()), B * C, z.data());
    Var a = attend(g, l, g.constant(z), target, st.memory,
                   static_cast<int>(l) == attention_layer ? &out.weights : nullptr);
    decoder_->residual_step(st.queues, st.h.data(), a.value().data(), st.h.data());
  }
  decoder_->advance(st.queues);
  if (scores == Scores::None) return out;  // the queues alone: no output layer
  Tensor last = g.alloc({B, C});
  std::copy_n(st.h.data(), B * C, last.data());
  out.logits = output(g, g.constant(last));  // [B, V]
  if (scores == Scores::LogProbs) out.log_probs = log_softmax(out.logits);
  return out;
}

namespace {

// Incremental decoding of ConvS2S: the memory is made by start() before the mark, the queues
// live outside the graph; each step frees the previous step's nodes.
class ConvDecoder final : public IncrementalDecoder {
 public:
  ConvDecoder(const ConvSeq2Seq& model, Graph& g, const Seq2SeqBatch& b, const AttentionChoice& a,
              int64_t rows_per_source)
      : model_(model),
        g_(g),
        state_(model.start(g, b.src, b.S, b.src_lengths, rows_per_source)),
        encoded_(g.mark()) {
    const auto layers = static_cast<int>(model.config().dec_layers);
    layer_ = a.wanted ? (a.layer < 0 ? layers - 1 : a.layer) : -1;
    check(layer_ < layers, "--attention-layer ", a.layer, ": the decoder has ", layers,
          " layers (0..", layers - 1, ")");
    check(a.head <= 0, "--attention-head ", a.head, ": a conv model has one head (0)");
  }

  bool log_probs_are_log_softmax() const override { return true; }

  Step step(std::span<const int32_t> prev, Scores scores) override {
    if (state_.queues.t > 0) g_.rewind(encoded_, {});
    ConvSeq2Seq::Step s = model_.step(g_, prev, state_, scores, layer_);
    Step out{step_scores(scores, s.logits, s.log_probs), nullptr};
    if (layer_ >= 0) out.weights = s.weights.data();  // [B, 1, 1, S] = [B, S]
    return out;
  }

  void reorder(std::span<const int32_t> from) override { model_.reorder(state_, from); }

 private:
  const ConvSeq2Seq& model_;
  Graph& g_;
  ConvSeq2Seq::DecoderState state_;
  Graph::Mark encoded_;
  int layer_ = -1;
};

}  // namespace

std::unique_ptr<IncrementalDecoder> ConvSeq2Seq::start_decoding(Graph& g, const Seq2SeqBatch& b,
                                                                int64_t /*max_len*/,
                                                                const AttentionChoice& a,
                                                                int64_t rows_per_source) const {
  return std::make_unique<ConvDecoder>(*this, g, b, a, rows_per_source);
}

}  // namespace heed
