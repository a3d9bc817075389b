// The sequence encoders (see the header).
// Leaves out: the models around them (models/).
#include "heed/nn/sequence_encoder.h"

#include <cmath>
#include <optional>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/packing.h"
#include "heed/nn/attention/attention.h"
#include "heed/util/error.h"
#include "heed/util/json.h"
#include "heed/util/overloaded.h"

namespace heed {
SequenceEncoder::Output SequenceEncoder::encode_vectors(Graph& /*g*/, Var /*x*/,
                                                        std::span<const int32_t> /*lengths*/,
                                                        const Options& /*options*/) const {
  fail("this encoder reads token ids only (a speech front end needs the birnn encoder)");
}

std::unique_ptr<SequenceEncoder::Stream> SequenceEncoder::stream_vectors() const {
  fail(
      "this encoder does not read a stream (a streaming recognizer's is a --unidirectional birnn)");
}

namespace {

class BiRnnSequenceEncoder final : public SequenceEncoder {
 public:
  BiRnnSequenceEncoder(const RnnEncoderConfig& c, const Scope& scope)
      : rnn_(c, scope / "encoder") {}
  int64_t width() const override { return rnn_.annotation_dim(); }
  Output encode(Graph& g, std::span<const int32_t> ids, int64_t S, std::span<const int32_t> lengths,
                const Options& o) const override {
    return output(rnn_.forward(g, ids, S, lengths), o);
  }
  Output encode_vectors(Graph& g, Var x, std::span<const int32_t> lengths,
                        const Options& o) const override {
    return output(rnn_.forward_vectors(g, x, lengths), o);
  }
  std::unique_ptr<Stream> stream_vectors() const override {
    struct RnnStream final : Stream {
      explicit RnnStream(RnnEncoder::Stream s) : s(std::move(s)) {}
      Var push(Graph& g, Var x) override { return s.push(g, x); }
      RnnEncoder::Stream s;
    };
    return std::make_unique<RnnStream>(rnn_.stream());
  }

 private:
  static Output output(const RnnEncoder::Output& e, const Options& o) {
    Output out;
    out.states = e.annotations;  // [B, S, Dm]
    // [->h_n ; <-h_1] (Bahdanau et al. 2015, A.2.2; Lin et al. 2017's "last" baseline)
    if (o.summary)
      out.summary = e.final_bwd.valid() ? concat({e.final_fwd, e.final_bwd}, 1) : e.final_fwd;
    return out;
  }
  RnnEncoder rnn_;
};

class TransformerSequenceEncoder final : public SequenceEncoder {
 public:
  TransformerSequenceEncoder(const TransformerEncoderConfig& c, const Scope& scope)
      : max_positions_(c.max_positions), dropout_(c.layer.dropout) {
    const int64_t d = c.layer.d_model;
    // N(0, d^-1/2), times sqrt(d) in PositionalEmbedding: unit-variance inputs; neither table
    // for a front end's vectors (vocab 0)
    if (c.vocab > 0) {
      embed_ =
          &scope.param("embed", {c.vocab, d}, Init::normal(1.f / std::sqrt(static_cast<float>(d))),
                       /*row_sparse=*/true);
      positions_.emplace(d, c.max_positions, c.positions, c.layer.dropout, scope);
    }
    encoder_.emplace(c.layer, c.layers, scope / "encoder");
    d_ = d;
  }
  int64_t width() const override { return d_; }
  Output encode(Graph& g, std::span<const int32_t> ids, int64_t S, std::span<const int32_t> lengths,
                const Options& o) const override {
    // packed rows of the real tokens (autograd/ops/packing.h)
    check(embed_ != nullptr, "transformer encoder: a speech front end's encoder reads vectors");
    const Packing p = make_packing(g, lengths, S);
    check(p.T <= max_positions_, "encoder: a sequence of ", p.T,
          " tokens is longer than the model's ", max_positions_, " positions");
    const PackedIds in = pack_ids(g, ids, p);
    Var x = positions_->forward(g, *embed_, in.ids, in.positions);  // [N, d]
    return layers(g, x, p, lengths, o);
  }
  // a front end's vectors x [S, B, d] (no table, no positions: the front end's convolutions
  // order them)
  Output encode_vectors(Graph& g, Var x, std::span<const int32_t> lengths,
                        const Options& o) const override {
    check(x.dim(2) == d_, "transformer encoder: vectors of ", x.dim(2), ", expected d_model ", d_);
    const Packing p = make_packing(g, lengths, x.dim(0));
    Var rows = pack(permute(x, {1, 0, 2}), p);  // [N, d]
    return layers(g, dropout(rows, dropout_), p, lengths, o);
  }
  std::unique_ptr<Stream> stream_vectors() const override {
    struct ChunkStream final : Stream {
      explicit ChunkStream(TransformerEncoder::Stream s) : s(std::move(s)) {}
      Var push(Graph& g, Var x) override {  // [n, 1, d] -> [1, m, d]
        return batch_of_one(s.push(g, reshape(x, Shape{x.dim(0), x.dim(2)})));
      }
      Var finish(Graph& g) override { return batch_of_one(s.finish(g)); }
      static Var batch_of_one(Var h) {
        return h.valid() ? reshape(h, Shape{1, h.dim(0), h.dim(1)}) : h;
      }
      TransformerEncoder::Stream s;
    };
    return std::make_unique<ChunkStream>(encoder_->stream());
  }

 private:
  Output layers(Graph& g, Var x, const Packing& p, std::span<const int32_t> lengths,
                const Options& o) const {
    Output out;
    Var h = encoder_->forward(x, p, o.self_attention ? &out.self_attention : nullptr);
    out.states = unpack(h, p);                                                 // [B, S, d]
    if (o.summary) out.summary = mean_over_positions(g, out.states, lengths);  // [B, d]
    return out;
  }

 private:
  int64_t d_ = 0, max_positions_;
  float dropout_;
  Parameter* embed_ = nullptr;                    // E [V, d]
  std::optional<PositionalEmbedding> positions_;  // made after the table, as saved models expect
  std::optional<TransformerEncoder> encoder_;
};

class ConvSequenceEncoder final : public SequenceEncoder {
 public:
  ConvSequenceEncoder(const ConvEncoderConfig& c, const Scope& scope) : c_(c) {
    embed_ = &scope.param("embed", {c.vocab, c.embed}, Init::normal(0.1f), /*row_sparse=*/true);
    positions_ = &scope.param("positions", {c.max_positions, c.embed}, Init::normal(0.1f),
                              /*row_sparse=*/true);
    const Scope enc = scope / "encoder";
    in_W_ = &enc.param("in/W", {c.channels, c.embed}, Init::glorot_uniform());
    in_b_ = &enc.param("in/b", {c.channels}, Init::zeros());
    stack_.emplace(c.stack(), enc);
  }
  int64_t width() const override { return c_.channels; }
  Output encode(Graph& g, std::span<const int32_t> ids, int64_t S, std::span<const int32_t> lengths,
                const Options& o) const override {
    const auto B = static_cast<int64_t>(lengths.size());
    check(S <= c_.max_positions, "conv encoder: a sequence of ", S,
          " tokens is longer than the model's ", c_.max_positions, " positions");
    // ids time-major [S, B] -> batch-major [B, S], and their positions t
    const std::span<const int32_t> tokens = batch_major(g, ids, B, S);
    const std::span<const int32_t> where = position_ids(g, B, S);
    // x_t = E w_t + P_t  [B, S, E], then C channels  [B, S, C]
    Var x = embedding(g.param(*embed_), tokens, Shape{B, S}) +
            embedding(g.param(*positions_), where, Shape{B, S});
    Var h = linear(dropout(x, c_.dropout), g.param(*in_W_), g.param(*in_b_));
    // per layer: [a ; b] = conv_l(dropout(h)),  h <- sqrt(1/2) (h + tanh(a) (.) sigmoid(b))
    Output out;
    out.states = stack_->forward(g, h, lengths);                               // [B, S, C]
    if (o.summary) out.summary = mean_over_positions(g, out.states, lengths);  // [B, C]
    return out;
  }

 private:
  ConvEncoderConfig c_;
  Parameter *embed_, *positions_;        // [V, E], [max_positions, E]
  Parameter *in_W_, *in_b_;              // [C, E], [C]
  std::optional<GatedConvStack> stack_;  // the layers, under "encoder/layer_<l>/"
};

class KimSequenceEncoder final : public SequenceEncoder {
 public:
  KimSequenceEncoder(const KimEncoderConfig& c, const Scope& scope) : c_(c) {
    check(!c.widths.empty() && c.maps >= 1, "kim encoder: ", c.widths.size(), " widths of ", c.maps,
          " maps");
    embed_ = &scope.param("embed", {c.vocab, c.embed}, Init::uniform(0.25f), /*row_sparse=*/true);
    const Scope enc = scope / "encoder";
    for (int64_t w : c.widths) {
      check(w >= 1, "kim encoder: a filter width of ", w);
      const Scope conv = enc / ("conv_" + std::to_string(w));
      W_.push_back(&conv.param("W", {c.maps, w * c.embed}, Init::glorot_uniform()));
      b_.push_back(&conv.param("b", {c.maps}, Init::zeros()));
    }
  }
  int64_t width() const override { return c_.width(); }
  Output encode(Graph& g, std::span<const int32_t> ids, int64_t S, std::span<const int32_t> lengths,
                const Options& o) const override {
    const auto B = static_cast<int64_t>(lengths.size());
    Var x = dropout(embedding(g.param(*embed_), batch_major(g, ids, B, S), Shape{B, S}),
                    c_.dropout);  // [B, S, E]
    // c_i = ReLU(w . x_{i-w+1:i} + b) for each width: [B, S, maps] each, [B, S, maps |widths|]
    std::vector<Var> maps;
    for (size_t i = 0; i < W_.size(); ++i)
      maps.push_back(relu(conv1d(x, g.param(*W_[i]), g.param(*b_[i]),
                                 {.kernel = c_.widths[i], .causal = true, .lengths = lengths})));
    Output out;
    out.states = maps.size() == 1 ? maps.front() : concat(maps, 2);           // [B, S, D]
    if (o.summary) out.summary = max_over_positions(g, out.states, lengths);  // c^ [B, D]
    return out;
  }

 private:
  KimEncoderConfig c_;
  Parameter* embed_;               // [V, E]
  std::vector<Parameter*> W_, b_;  // per width w: [maps, w E], [maps]
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
                          if (e.init != RnnInit::Glorot) j["rnn_init"] = name_of(e.init);
                        },
                        [&](const auto& e) {  // transformer, conv, kim
                          j["src_vocab"] = e.vocab;
                          j["encoder"] = e.to_json();
                        }},
             c);
}

EncoderConfig encoder_from_json(const nlohmann::json& j) {
  if (j.contains("encoder")) {
    const nlohmann::json& e = j.at("encoder");
    const std::string kind = e.at("kind").get<std::string>();
    if (kind == "conv") return ConvEncoderConfig::from_json(e);
    if (kind == "kim") return KimEncoderConfig::from_json(e);
    return TransformerEncoderConfig::from_json(e);
  }
  RnnEncoderConfig e;
  e.cell = parse_cell(j.at("cell").get<std::string>());
  e.vocab = j.at("src_vocab").get<int64_t>();
  e.embed = j.at("src_embed").get<int64_t>();
  e.hidden = j.at("enc_hidden").get<int64_t>();
  e.layers = j.at("enc_layers").get<int>();
  e.bidirectional = j.at("bidirectional").get<bool>();
  if (j.contains("rnn_init"))
    e.init = parse_name<RnnInit>(j.at("rnn_init").get<std::string>(), "config.json: rnn_init");
  return e;
}

std::span<const int32_t> batch_major(Graph& g, std::span<const int32_t> ids, int64_t B, int64_t S) {
  int32_t* bs = g.arena().array<int32_t>(static_cast<size_t>(B * S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < S; ++t) bs[b * S + t] = ids[t * B + b];
  return {bs, static_cast<size_t>(B * S)};
}

std::span<const int32_t> position_ids(Graph& g, int64_t B, int64_t S) {
  int32_t* pos = g.arena().array<int32_t>(static_cast<size_t>(B * S));  // [B, S]: t
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < S; ++t) pos[b * S + t] = static_cast<int32_t>(t);
  return {pos, static_cast<size_t>(B * S)};
}

Var mean_over_positions(Graph& g, Var x, std::span<const int32_t> lengths) {
  const int64_t B = x.dim(0), S = x.dim(1);
  Tensor w = g.alloc(Shape{B, S, 1});  // 1/n on the real positions, 0 on padding
  for (int64_t n = 0; n < B; ++n)
    for (int64_t t = 0; t < S; ++t)
      w.data()[n * S + t] = t < lengths[n] ? 1.f / static_cast<float>(lengths[n]) : 0.f;
  return sum(mul(x, g.constant(w)), 1);  // [B, D]
}

Var max_over_positions(Graph& g, Var x, std::span<const int32_t> lengths) {
  const int64_t B = x.dim(0), S = x.dim(1);
  Tensor pad = padding_mask(lengths, S, g).reshape(Shape{B, S, 1});  // 0 or -inf
  return max(add(x, g.constant(pad)), 1);                            // [B, D]
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

GatedConvConfig ConvEncoderConfig::stack() const {
  return {.channels = channels,
          .kernel = kernel,
          .dilations = dilations,
          .causal = causal,
          .projection = false,
          .weight_norm = weight_norm,
          .residual_scale = std::sqrt(0.5f),
          .dropout = dropout};
}

int64_t ConvEncoderConfig::receptive_field() const {
  return stack().receptive_field();
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
          {"max_positions", max_positions},
          {"weight_norm", weight_norm}};
}

ConvEncoderConfig ConvEncoderConfig::from_json(const nlohmann::json& j) {
  check(j.at("kind").get<std::string>() == "conv", "not a convolutional encoder config");
  return {.vocab = j.at("vocab").get<int64_t>(),
          .embed = j.at("embed").get<int64_t>(),
          .channels = j.at("channels").get<int64_t>(),
          .kernel = j.at("kernel").get<int64_t>(),
          .dilations = j.at("dilations").get<std::vector<int64_t>>(),
          .causal = j.at("causal").get<bool>(),
          .weight_norm = j.value("weight_norm", false),  // absent before it existed
          .dropout = j.at("dropout").get<float>(),
          .max_positions = j.at("max_positions").get<int64_t>()};
}

nlohmann::json KimEncoderConfig::to_json() const {
  return {{"kind", "kim"},    {"vocab", vocab}, {"embed", embed},
          {"widths", widths}, {"maps", maps},   {"dropout", json_number(dropout)}};
}

KimEncoderConfig KimEncoderConfig::from_json(const nlohmann::json& j) {
  check(j.at("kind").get<std::string>() == "kim", "not a Kim convolutional encoder config");
  return {.vocab = j.at("vocab").get<int64_t>(),
          .embed = j.at("embed").get<int64_t>(),
          .widths = j.at("widths").get<std::vector<int64_t>>(),
          .maps = j.at("maps").get<int64_t>(),
          .dropout = j.at("dropout").get<float>()};
}

std::string describe(const EncoderConfig& c) {
  return std::visit(
      overloaded{[](const RnnEncoderConfig& e) {
                   return std::to_string(e.layers) + "-layer " + (e.bidirectional ? "bi" : "") +
                          cell_name(e.cell) + " " + std::to_string(e.hidden);
                 },
                 [](const TransformerEncoderConfig& e) {
                   std::string out = std::to_string(e.layers) + "-layer transformer encoder, d " +
                                     std::to_string(e.layer.d_model);
                   if (e.layer.encoder_chunk > 0)
                     out += ", chunks of " + std::to_string(e.layer.encoder_chunk) + " (" +
                            std::to_string(e.layer.left_chunks) + " to the left, lookahead " +
                            std::to_string(e.layer.lookahead) + ")";
                   return out;
                 },
                 [](const ConvEncoderConfig& e) {
                   return std::to_string(e.dilations.size()) + "-layer " +
                          (e.causal ? "causal" : "centred") + " conv encoder, C " +
                          std::to_string(e.channels) + ", k " + std::to_string(e.kernel) +
                          ", receptive field " + std::to_string(e.receptive_field());
                 },
                 [](const KimEncoderConfig& e) {
                   std::string w;
                   for (int64_t x : e.widths) {
                     if (!w.empty()) w += ' ';
                     w += std::to_string(x);
                   }
                   return "Kim convolutions of widths " + w + ", " + std::to_string(e.maps) +
                          " maps each";
                 }},
      c);
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
                 },
                 [&](const KimEncoderConfig& c) -> std::unique_ptr<SequenceEncoder> {
                   return std::make_unique<KimSequenceEncoder>(c, scope);
                 }},
      config);
}

}  // namespace heed
