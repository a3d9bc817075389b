// The sequence encoders (see the header).
// Leaves out: the models around them (models/).
#include "heed/nn/sequence_encoder.h"

#include <cmath>
#include <optional>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/packing.h"
#include "heed/util/error.h"
#include "heed/util/json.h"
#include "heed/util/overloaded.h"

namespace heed {
namespace {

class BiRnnSequenceEncoder final : public SequenceEncoder {
 public:
  BiRnnSequenceEncoder(const RnnEncoderConfig& c, const Scope& scope)
      : rnn_(c, scope / "encoder") {}
  int64_t width() const override { return rnn_.annotation_dim(); }
  Output encode(Graph& g, std::span<const int32_t> ids, int64_t S, std::span<const int32_t> lengths,
                const Options& o) const override {
    RnnEncoder::Output e = rnn_.forward(g, ids, S, lengths);
    Output out;
    out.states = e.annotations;  // [B, S, Dm]
    // [->h_n ; <-h_1] (Bahdanau et al. 2015, A.2.2; Lin et al. 2017's "last" baseline)
    if (o.summary)
      out.summary = e.final_bwd.valid() ? concat({e.final_fwd, e.final_bwd}, 1) : e.final_fwd;
    return out;
  }

 private:
  RnnEncoder rnn_;
};

class TransformerSequenceEncoder final : public SequenceEncoder {
 public:
  TransformerSequenceEncoder(const TransformerEncoderConfig& c, const Scope& scope)
      : max_positions_(c.max_positions) {
    const int64_t d = c.layer.d_model;
    // N(0, d^-1/2), times sqrt(d) in PositionalEmbedding: unit-variance inputs
    embed_ =
        &scope.param("embed", {c.vocab, d}, Init::normal(1.f / std::sqrt(static_cast<float>(d))),
                     /*row_sparse=*/true);
    positions_.emplace(d, c.max_positions, c.positions, c.layer.dropout, scope);
    encoder_.emplace(c.layer, c.layers, scope / "encoder");
    d_ = d;
  }
  int64_t width() const override { return d_; }
  Output encode(Graph& g, std::span<const int32_t> ids, int64_t S, std::span<const int32_t> lengths,
                const Options& o) const override {
    // packed rows of the real tokens (autograd/ops/packing.h)
    const Packing p = make_packing(g, lengths, S);
    check(p.T <= max_positions_, "encoder: a sequence of ", p.T,
          " tokens is longer than the model's ", max_positions_, " positions");
    const PackedIds in = pack_ids(g, ids, p);
    Var x = positions_->forward(g, *embed_, in.ids, in.positions);  // [N, d]
    Output out;
    Var h = encoder_->forward(x, p, o.self_attention ? &out.self_attention : nullptr);
    out.states = unpack(h, p);                                                 // [B, S, d]
    if (o.summary) out.summary = mean_over_positions(g, out.states, lengths);  // [B, d]
    return out;
  }

 private:
  int64_t d_ = 0, max_positions_;
  Parameter* embed_;                              // E [V, d]
  std::optional<PositionalEmbedding> positions_;  // made after the table, as saved models expect
  std::optional<TransformerEncoder> encoder_;
};

class ConvSequenceEncoder final : public SequenceEncoder {
 public:
  ConvSequenceEncoder(const ConvEncoderConfig& c, const Scope& scope) : c_(c) {
    check(c.kernel >= 1 && !c.dilations.empty(), "conv encoder: kernel ", c.kernel, " and ",
          c.dilations.size(), " layers");
    check(c.causal || c.kernel % 2 == 1,
          "conv encoder: a centred convolution needs an odd "
          "kernel, got ",
          c.kernel);
    embed_ = &scope.param("embed", {c.vocab, c.embed}, Init::normal(0.1f), /*row_sparse=*/true);
    positions_ = &scope.param("positions", {c.max_positions, c.embed}, Init::normal(0.1f),
                              /*row_sparse=*/true);
    const Scope enc = scope / "encoder";
    in_W_ = &enc.param("in/W", {c.channels, c.embed}, Init::glorot_uniform());
    in_b_ = &enc.param("in/b", {c.channels}, Init::zeros());
    for (size_t l = 0; l < c.dilations.size(); ++l) {
      check(c.dilations[l] >= 1, "conv encoder: dilation ", c.dilations[l], " of layer ", l);
      const Scope layer = enc / ("layer_" + std::to_string(l));
      conv_W_.push_back(
          &layer.param("conv/W", {2 * c.channels, c.kernel * c.channels}, Init::glorot_uniform()));
      conv_b_.push_back(&layer.param("conv/b", {2 * c.channels}, Init::zeros()));
    }
  }
  int64_t width() const override { return c_.channels; }
  Output encode(Graph& g, std::span<const int32_t> ids, int64_t S, std::span<const int32_t> lengths,
                const Options& o) const override {
    const auto B = static_cast<int64_t>(lengths.size());
    check(S <= c_.max_positions, "conv encoder: a sequence of ", S,
          " tokens is longer than the model's ", c_.max_positions, " positions");
    // ids time-major [S, B] -> batch-major [B, S], and their positions
    int32_t* bs = g.arena().array<int32_t>(static_cast<size_t>(B * S));
    int32_t* pos = g.arena().array<int32_t>(static_cast<size_t>(B * S));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < S; ++t) {
        bs[b * S + t] = ids[t * B + b];
        pos[b * S + t] = static_cast<int32_t>(t);
      }
    const std::span<const int32_t> tokens(bs, static_cast<size_t>(B * S)),
        where(pos, static_cast<size_t>(B * S));
    // x_t = E w_t + P_t  [B, S, E], then C channels  [B, S, C]
    Var x = embedding(g.param(*embed_), tokens, Shape{B, S}) +
            embedding(g.param(*positions_), where, Shape{B, S});
    Var h = linear(dropout(x, c_.dropout), g.param(*in_W_), g.param(*in_b_));
    const int64_t C = c_.channels;
    for (size_t l = 0; l < conv_W_.size(); ++l) {
      // [a ; b] = conv_l(dropout(h)) [B, S, 2C];  h <- sqrt(1/2) (h + tanh(a) (.) sigmoid(b))
      Var ab = conv1d(dropout(h, c_.dropout), g.param(*conv_W_[l]), g.param(*conv_b_[l]),
                      {.kernel = c_.kernel,
                       .dilation = c_.dilations[l],
                       .causal = c_.causal,
                       .lengths = lengths});
      h = (h + tanh(slice(ab, 2, 0, C)) * sigmoid(slice(ab, 2, C, C))) * std::sqrt(0.5f);
    }
    Output out;
    out.states = h;                                                            // [B, S, C]
    if (o.summary) out.summary = mean_over_positions(g, out.states, lengths);  // [B, C]
    return out;
  }

 private:
  ConvEncoderConfig c_;
  Parameter *embed_, *positions_;            // [V, E], [max_positions, E]
  Parameter *in_W_, *in_b_;                  // [C, E], [C]
  std::vector<Parameter*> conv_W_, conv_b_;  // per layer [2C, k C], [2C]
};

}  // namespace

void encoder_to_json(const EncoderConfig& c, nlohmann::json& j) {
  std::visit(overloaded{[&](const RnnEncoderConfig& e) {
                          j["cell"] = cell_name(e.cell);
                          j["src_vocab"] = e.vocab;
                          j["src_embed"] = e.embed;
                          j["enc_hidden"] = e.hidden;
                          j["enc_layers"] = e.layers;
                          j["bidirectional"] = e.bidirectional;
                        },
                        [&](const auto& e) {  // transformer, conv
                          j["src_vocab"] = e.vocab;
                          j["encoder"] = e.to_json();
                        }},
             c);
}

EncoderConfig encoder_from_json(const nlohmann::json& j) {
  if (j.contains("encoder")) {
    const nlohmann::json& e = j.at("encoder");
    if (e.at("kind").get<std::string>() == "conv") return ConvEncoderConfig::from_json(e);
    return TransformerEncoderConfig::from_json(e);
  }
  RnnEncoderConfig e;
  e.cell = parse_cell(j.at("cell").get<std::string>());
  e.vocab = j.at("src_vocab").get<int64_t>();
  e.embed = j.at("src_embed").get<int64_t>();
  e.hidden = j.at("enc_hidden").get<int64_t>();
  e.layers = j.at("enc_layers").get<int>();
  e.bidirectional = j.at("bidirectional").get<bool>();
  return e;
}

Var mean_over_positions(Graph& g, Var x, std::span<const int32_t> lengths) {
  const int64_t B = x.dim(0), S = x.dim(1);
  Tensor w = g.alloc(Shape{B, S, 1});  // 1/n on the real positions, 0 on padding
  for (int64_t n = 0; n < B; ++n)
    for (int64_t t = 0; t < S; ++t)
      w.data()[n * S + t] = t < lengths[n] ? 1.f / static_cast<float>(lengths[n]) : 0.f;
  return sum(mul(x, g.constant(w)), 1);  // [B, D]
}

nlohmann::json TransformerEncoderConfig::to_json() const {
  nlohmann::json j = {{"kind", "transformer"}, {"vocab", vocab}};
  layer.to_json(j);
  j["layers"] = layers;
  j["positions"] = name_of(positions);
  j["max_positions"] = max_positions;
  return j;
}

TransformerEncoderConfig TransformerEncoderConfig::from_json(const nlohmann::json& j) {
  check(j.at("kind").get<std::string>() == "transformer", "not a Transformer encoder config");
  return {.vocab = j.at("vocab").get<int64_t>(),
          .layer = TransformerLayerConfig::from_json(j),
          .layers = j.at("layers").get<int64_t>(),
          .positions = parse_name<Positions>(j.at("positions").get<std::string>(), "positions"),
          .max_positions = j.at("max_positions").get<int64_t>()};
}

int64_t ConvEncoderConfig::receptive_field() const {
  std::vector<Conv1dOptions> layers;
  for (int64_t d : dilations) layers.push_back({.kernel = kernel, .dilation = d});
  return heed::receptive_field(layers);
}

nlohmann::json ConvEncoderConfig::to_json() const {
  return {{"kind", "conv"},
          {"vocab", vocab},
          {"embed", embed},
          {"channels", channels},
          {"kernel", kernel},
          {"dilations", dilations},
          {"causal", causal},
          {"dropout", json_number(dropout)},
          {"max_positions", max_positions}};
}

ConvEncoderConfig ConvEncoderConfig::from_json(const nlohmann::json& j) {
  check(j.at("kind").get<std::string>() == "conv", "not a convolutional encoder config");
  return {.vocab = j.at("vocab").get<int64_t>(),
          .embed = j.at("embed").get<int64_t>(),
          .channels = j.at("channels").get<int64_t>(),
          .kernel = j.at("kernel").get<int64_t>(),
          .dilations = j.at("dilations").get<std::vector<int64_t>>(),
          .causal = j.at("causal").get<bool>(),
          .dropout = j.at("dropout").get<float>(),
          .max_positions = j.at("max_positions").get<int64_t>()};
}

int64_t vocab_size(const EncoderConfig& c) {
  return std::visit([](const auto& x) { return x.vocab; }, c);
}

void set_vocab_size(EncoderConfig& c, int64_t vocab) {
  std::visit([&](auto& x) { x.vocab = vocab; }, c);
}

std::unique_ptr<SequenceEncoder> make_sequence_encoder(const EncoderConfig& config,
                                                       const Scope& scope) {
  return std::visit(
      overloaded{[&](const RnnEncoderConfig& c) -> std::unique_ptr<SequenceEncoder> {
                   return std::make_unique<BiRnnSequenceEncoder>(c, scope);
                 },
                 [&](const TransformerEncoderConfig& c) -> std::unique_ptr<SequenceEncoder> {
                   return std::make_unique<TransformerSequenceEncoder>(c, scope);
                 },
                 [&](const ConvEncoderConfig& c) -> std::unique_ptr<SequenceEncoder> {
                   return std::make_unique<ConvSequenceEncoder>(c, scope);
                 }},
      config);
}

}  // namespace heed
